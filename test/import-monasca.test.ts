import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { createTestDatabase, testDialects, type TestDatabase } from './support/databases.js';
import { emulatedAlarm, startKeystoneMonasca, transition, type EmulatedProject, type KeystoneMonasca } from './support/keystone-monasca.js';
import { monascaImportNeeds } from '../src/integrations/monasca/import.js';
import { readOnlyFetch } from './support/import-run.js';
import { createObservationTable, storedObservations, tableSink, type StoredObservation } from './support/observation-table.js';
import { startTestEnv, type TestEnv } from './support/app.js';
import { waitFor } from './support/wait.js';

/*
 * Issue 38.2, Monasca: the import reads GET /v2.0/alarms and GET /v2.0/alarms/state-history with a
 * token from Keystone (the Keystone + Monasca emulator of test/support/keystone-monasca.ts, built
 * from openstack/monasca-api docs/monasca-api-spec.md and the API's own paging code), page by page,
 * each page applied with its cursor in one transaction (the observations land in a table of the
 * test's database, in that transaction, as incidents' applyObservations will). The emulator checks
 * the token and keeps every call it does not serve: a write would be there.
 */
const DAY = 86_400_000;
const USER = { username: 'monitor-reader', password: 'reader-password-41', domain: 'Default', projects: ['ops'] };
const LOGIN = { version: 'v3', identityUrl: '', username: USER.username, password: USER.password, project: 'ops' };

describe.each(testDialects())('importing Monasca alarms on %s', (dialect) => {
  let database: TestDatabase;
  let env: TestEnv;
  let cloud: KeystoneMonasca;
  let project: EmulatedProject;
  const now = Date.now();
  const at = (daysAgo: number, minutes = 0) => Math.floor((now - daysAgo * DAY + minutes * 60_000) / 1000) * 1000;

  beforeAll(async () => {
    database = await createTestDatabase(dialect);
    cloud = await startKeystoneMonasca([USER]);
    cloud.maxLimit = 2;
    project = cloud.projects.get('ops')!;
    const cpu = { id: 'def-cpu', name: 'high cpu', severity: 'CRITICAL' as const };
    const disk = { id: 'def-disk', name: 'disk full', severity: 'HIGH' as const };
    project.alarms.push(emulatedAlarm('alarm-a', cpu, 'web-1', at(50)), emulatedAlarm('alarm-b', disk, 'db-1', at(50)), emulatedAlarm('alarm-c', cpu, 'web-2', at(50)));
    // C went to ALARM before the look-back and stays there; A fired, resolved, fired again; B fired and resolved, then lost its data.
    transition(project, 'alarm-c', 'ALARM', at(40));
    transition(project, 'alarm-a', 'ALARM', at(3));
    transition(project, 'alarm-a', 'OK', at(3, 25));
    transition(project, 'alarm-b', 'ALARM', at(2));
    transition(project, 'alarm-b', 'OK', at(2, 90));
    transition(project, 'alarm-b', 'UNDETERMINED', at(1));
    transition(project, 'alarm-a', 'ALARM', at(0, -30));
    const store = database.open();
    await createObservationTable(store);
    await store.close();
    env = await startTestEnv(dialect, { database, importSink: tableSink });
  });

  afterAll(async () => {
    await env?.close();
    await cloud?.close();
    await database?.drop();
  });

  const lines = (observations: StoredObservation[]) => observations.map((o) => (o.state === 'open_keys' ? `open ${o.openKeys!.join(',')}` : `${o.key} ${o.state} ${new Date(o.at!).toISOString()} ${o.alarmName} ${o.hostname} ${o.severity}`)).sort();

  async function integration(name: string, importSettings: Record<string, unknown>): Promise<string> {
    const made = await env.api('POST', '/api/v1/integrations', { name, type: 'monasca', config: { monascaUrl: cloud.url } });
    expect(made.statusCode, made.body).toBe(201);
    const id = made.json().id as string;
    const patched = await env.api('PATCH', `/api/v1/integrations/${id}`, { import: importSettings });
    expect(patched.statusCode, patched.body).toBe(200);
    return id;
  }

  async function importNow(id: string): Promise<{ id: string; state: string; imported: number; pages: number; error?: string }> {
    const started = await env.api('POST', `/api/v1/integrations/${id}/import`);
    expect(started.statusCode, started.body).toBe(202);
    const importId = started.json().importId as string;
    return waitFor(async () => {
      const item = (await env.api('GET', `/api/v1/integrations/${id}/imports`)).json().items.find((i: { id: string }) => i.id === importId);
      return item && ['succeeded', 'failed'].includes(item.state) ? item : undefined;
    }, `import ${importId} ended`);
  }

  it('reads the alarms and their state history with a token from Keystone, a page at a time, GETs only, and names what is open', async () => {
    const id = await integration('monasca-eu', { enabled: false, lookbackDays: 30, secret: { ...LOGIN, identityUrl: cloud.url } });
    const shown = (await env.api('GET', `/api/v1/integrations/${id}`)).json();
    expect(shown.import).toMatchObject({ enabled: false, lookbackDays: 30, intervalSeconds: 300, requestsPerSecond: 5, hasSecret: true, credentialId: null, status: { state: null, importedTotal: 0 } });
    expect(JSON.stringify(shown)).not.toContain(USER.password);
    const callsBefore = cloud.requests.length;

    const run = await importNow(id);
    expect(run).toMatchObject({ state: 'succeeded', imported: 6 });
    // Six transitions, two a page (the emulator's limit): three pages of history, the last also naming what is open.
    expect(run.pages).toBe(3);
    expect(lines(await storedObservations(env.store.db, id))).toEqual([
      `alarm-a firing ${new Date(at(0, -30)).toISOString()} high cpu web-1 CRITICAL`,
      `alarm-a firing ${new Date(at(3)).toISOString()} high cpu web-1 CRITICAL`,
      `alarm-a resolved ${new Date(at(3, 25)).toISOString()} high cpu web-1 CRITICAL`,
      `alarm-b firing ${new Date(at(2)).toISOString()} disk full db-1 HIGH`,
      `alarm-b resolved ${new Date(at(2, 90)).toISOString()} disk full db-1 HIGH`,
      // In ALARM since before the look-back: fires at the time Monasca says its state changed.
      `alarm-c firing ${new Date(at(40)).toISOString()} high cpu web-2 CRITICAL`,
      'open alarm-a,alarm-c',
    ].sort());

    const calls = cloud.requests.slice(callsBefore);
    expect(calls.filter((c) => c.method === 'POST').map((c) => c.path)).toEqual(['/v3/auth/tokens']);
    expect(calls.filter((c) => c.method !== 'POST').every((c) => c.method === 'GET' && c.token !== undefined)).toBe(true);
    expect(calls.filter((c) => c.path === '/v2.0/alarms/state-history')).toHaveLength(3);
    expect(cloud.unexpected).toEqual([]);

    const status = (await env.api('GET', `/api/v1/integrations/${id}`)).json().import.status;
    expect(status).toMatchObject({ lastImportId: expect.any(String), state: 'succeeded', imported: 6, importedTotal: 6, lastError: null });
  });

  it('takes a token and reads through the runner\'s read-only fetch; a write to Monasca through it is refused before it leaves', async () => {
    const { fetch, methods } = readOnlyFetch(monascaImportNeeds);
    const token = await fetch(`${cloud.url}/v3/auth/tokens`, { method: 'POST', headers: { 'content-type': 'application/json' }, body: JSON.stringify({ auth: { identity: { methods: ['password'], password: { user: { name: USER.username, domain: { name: USER.domain }, password: USER.password } } }, scope: { project: { name: 'ops', domain: { name: 'Default' } } } } }) });
    expect(token.status).toBe(201);
    const headers = { 'x-auth-token': token.headers.get('x-subject-token')! };
    expect((await fetch(`${cloud.url}/v2.0/alarms`, { method: 'GET', headers })).status).toBe(200);
    const asked = cloud.requests.length;
    await expect(fetch(`${cloud.url}/v2.0/alarms/alarm-a`, { method: 'PATCH', headers, body: '{"state":"OK"}' })).rejects.toThrow(`pitcrew did not send PATCH ${cloud.url}/v2.0/alarms/alarm-a: an import only reads from Monasca`);
    await expect(fetch(`${cloud.url}/v2.0/alarm-definitions`, { method: 'POST', headers, body: '{"name":"x","expression":"cpu.idle_perc < 10"}' })).rejects.toThrow(/pitcrew did not send POST/);
    await expect(fetch(`${cloud.url}/v2.0/alarms/alarm-a`, { method: 'DELETE', headers })).rejects.toThrow(/pitcrew did not send DELETE/);
    expect(cloud.requests).toHaveLength(asked);
    expect(methods).toEqual(['POST', 'GET']);
  });

  it('continues from its cursor: the next import applies only what changed since, and nothing twice', async () => {
    const id = await integration('monasca-us', { enabled: false, lookbackDays: 30, secret: { ...LOGIN, identityUrl: cloud.url } });
    expect((await importNow(id)).imported).toBe(6);
    transition(project, 'alarm-a', 'OK', at(0, -5));
    const again = await importNow(id);
    expect(again).toMatchObject({ state: 'succeeded', imported: 1, pages: 1 });
    const stored = lines(await storedObservations(env.store.db, id));
    expect(stored.filter((line) => line.startsWith('alarm-a resolved'))).toEqual([
      `alarm-a resolved ${new Date(at(3, 25)).toISOString()} high cpu web-1 CRITICAL`,
      `alarm-a resolved ${new Date(at(0, -5)).toISOString()} high cpu web-1 CRITICAL`,
    ]);
    expect(stored.filter((line) => line.startsWith('open'))).toEqual(['open alarm-a,alarm-c', 'open alarm-c']);
    expect(stored).toHaveLength(9);
    // Undo for the other tests of this file.
    transition(project, 'alarm-a', 'ALARM', at(0, -4));
    expect((await env.api('GET', `/api/v1/integrations/${id}`)).json().import.status).toMatchObject({ imported: 1, importedTotal: 7 });
  });

  it('says which tool refused what, without the password, and keeps the failure on the integration', async () => {
    const id = await integration('monasca-wrong', { enabled: false, secret: { ...LOGIN, identityUrl: cloud.url, password: 'not-the-password-93' } });
    const run = await importNow(id);
    expect(run.state).toBe('failed');
    expect(run.error).toMatch(/^Keystone refused the credentials of user monitor-reader of project ops/);
    expect(run.error).not.toContain('not-the-password-93');
    const status = (await env.api('GET', `/api/v1/integrations/${id}`)).json().import.status;
    expect(status).toMatchObject({ state: 'failed', lastError: run.error, imported: 0 });
    expect(await storedObservations(env.store.db, id)).toEqual([]);
  });

  it('keeps the secret write-only: never shown, masked in the audit log, and refused in a shape Keystone cannot take', async () => {
    const id = await integration('monasca-audit', { enabled: false, secret: { ...LOGIN, identityUrl: cloud.url } });
    const entry = (await env.api('GET', `/api/v1/audit?target=integration:${id}&action=integration.update`)).json().items[0];
    expect(entry.after.import.hasSecret).toBe(true);
    expect(JSON.stringify(entry)).not.toContain(USER.password);
    const bad = await env.api('PATCH', `/api/v1/integrations/${id}`, { import: { enabled: true, secret: { version: 'v3', username: 'x' } } });
    expect(bad.statusCode).toBe(400);
    expect(bad.json().errors.map((e: { path: string }) => e.path)).toContain('/body/import/secret/identityUrl');
    const notMonasca = await env.api('POST', '/api/v1/integrations', { name: 'grafana-x', type: 'grafana' });
    const refused = await env.api('PATCH', `/api/v1/integrations/${notMonasca.json().id}`, { import: { enabled: true } });
    expect(refused.statusCode).toBe(400);
    expect(refused.json().detail).toMatch(/does not import alarms from grafana integrations/);
  });

  it('resumes an import stopped between pages where its last page committed: nothing applied twice, nothing missed', async () => {
    const id = await integration('monasca-restart', { enabled: false, lookbackDays: 30, secret: { ...LOGIN, identityUrl: cloud.url } });
    // Hold the second page of history: the first is committed, the second asked for when the service stops.
    let held = 0;
    let heldOffset: string | null = null;
    cloud.gate = (_method, path, query) => {
      if (path !== '/v2.0/alarms/state-history' || !query.has('offset') || held > 0) return undefined;
      held += 1;
      heldOffset = query.get('offset');
      return new Promise<void>(() => undefined);
    };
    const started = await env.api('POST', `/api/v1/integrations/${id}/import`);
    const importId = started.json().importId as string;
    await waitFor(() => held > 0, 'the second page asked for');
    expect((await storedObservations(env.store.db, id)).length).toBe(2);
    await env.close();
    const row = await (async () => {
      const store = database.open();
      try {
        return await store.db.selectFrom('imports').selectAll().where('id', '=', importId).executeTakeFirstOrThrow();
      } finally {
        await store.close();
      }
    })();
    expect(row).toMatchObject({ state: 'queued', pages: 1, imported: 2 });

    cloud.gate = undefined;
    const before = cloud.requests.length;
    env = await startTestEnv(dialect, { database, importSink: tableSink, importPollMs: 50 });
    const ended = await waitFor(async () => {
      const item = (await env.api('GET', `/api/v1/integrations/${id}/imports`)).json().items[0];
      return item?.state === 'succeeded' ? item : undefined;
    }, 'the import resumed and ended');
    // What the history holds in the look-back (the earlier tests added to it), two a page; and C, in ALARM since before.
    const inRange = project.history.filter((t) => Date.parse(t.timestamp) >= now - 30 * DAY);
    const expected = inRange.filter((t) => t.new_state !== 'UNDETERMINED').length + 1;
    expect(ended).toMatchObject({ id: importId, imported: expected, pages: Math.ceil(inRange.length / 2) });
    // Resumed at the held page (the new node asked for the same offset), not from the look-back.
    const history = cloud.requests.slice(before).filter((c) => c.path === '/v2.0/alarms/state-history');
    expect(history).toHaveLength(Math.ceil(inRange.length / 2) - 1);
    expect(heldOffset).toBe(String(Date.parse(inRange[1]!.timestamp)));
    const stored = lines(await storedObservations(env.store.db, id));
    expect(stored).toHaveLength(expected + 1);
    expect(new Set(stored).size).toBe(expected + 1);
    expect(cloud.unexpected).toEqual([]);
  });
});

describe('a Monasca import and the egress policy', () => {
  it('does not call a loopback Monasca the operator has not opened, and says which setting opens it', async () => {
    const cloud = await startKeystoneMonasca([USER]);
    const env = await startTestEnv('sqlite', { egressAllowNetworks: [], importSink: tableSink });
    try {
      await createObservationTable(env.store);
      const made = await env.api('POST', '/api/v1/integrations', { name: 'monasca-closed', type: 'monasca', config: { monascaUrl: cloud.url } });
      const id = made.json().id as string;
      await env.api('PATCH', `/api/v1/integrations/${id}`, { import: { enabled: false, secret: { ...LOGIN, identityUrl: cloud.url } } });
      const importId = (await env.api('POST', `/api/v1/integrations/${id}/import`)).json().importId as string;
      const ended = await waitFor(async () => {
        const item = (await env.api('GET', `/api/v1/integrations/${id}/imports`)).json().items.find((i: { id: string }) => i.id === importId);
        return item?.state === 'failed' ? item : undefined;
      }, 'the import failed');
      expect(ended.error).toMatch(/Keystone at http:\/\/127\.0\.0\.1:\d+\/v3\/auth\/tokens is unreachable \(127\.0\.0\.1 is a private, loopback or link-local address.*PITCREW_EGRESS_ALLOW_NETWORKS/);
      expect(cloud.requests).toEqual([]);
    } finally {
      await env.close();
      await cloud.close();
    }
  });
});
