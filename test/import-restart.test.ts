import { afterAll, beforeAll, describe, expect, it, onTestFailed } from 'vitest';
import { createTestDatabase, testDialects, type TestDatabase } from './support/databases.js';
import { emulatedAlarm, startKeystoneMonasca, transition, type KeystoneMonasca } from './support/keystone-monasca.js';
import { runCli, startServer, type ServerProcess } from './support/process.js';
import { waitFor } from './support/wait.js';

/*
 * Issue 38.2, "an import interrupted by a restart resumes without duplicates", with the real
 * service: `pitcrew server` imports a Monasca history page by page (the emulator of
 * test/support/keystone-monasca.ts), and is killed (SIGKILL) while it waits for a page. The pages
 * before are incidents already; a new process takes the import over from the dead one (the node
 * the sweeper finds gone), asks the tool for the page it was waiting for, and ends with every
 * alarm's incidents once: same count, same occurrences, as an import never interrupted.
 */
const USER = { username: 'reader', password: 'reader-password-63', projects: ['ops'] };
const HOUR = 3_600_000;
const STEP_MS = 60_000;

describe.each(testDialects())('an import killed mid-run on %s', (dialect) => {
  let database: TestDatabase;
  let cloud: KeystoneMonasca;
  let server: ServerProcess | undefined;
  let token: string;
  const now = Date.now();

  beforeAll(async () => {
    database = await createTestDatabase(dialect);
    token = JSON.parse((await runCli(['bootstrap', '--json'], database.env)).stdout).token;
    cloud = await startKeystoneMonasca([USER]);
    cloud.maxLimit = 3;
    const project = cloud.projects.get('ops')!;
    // Four hosts' alarms, each fired and resolved twice, the last still firing on web-1: 16 + 1 transitions, six pages of three.
    for (const [i, host] of ['web-1', 'web-2', 'web-3', 'web-4'].entries()) {
      project.alarms.push(emulatedAlarm(`alarm-${i}`, { id: 'def-disk', name: 'disk full', severity: 'HIGH' }, host, now - 20 * 24 * HOUR));
      for (const round of [0, 1]) {
        transition(project, `alarm-${i}`, 'ALARM', now - (10 - round * 4) * HOUR + i * 60_000);
        transition(project, `alarm-${i}`, 'OK', now - (9 - round * 4) * HOUR + i * 60_000);
      }
    }
    transition(project, 'alarm-0', 'ALARM', now - HOUR);
  });

  afterAll(async () => {
    await server?.kill();
    await cloud?.close();
    await database?.drop();
  });

  // eslint-disable-next-line @typescript-eslint/no-explicit-any
  async function api(method: string, url: string, body?: unknown): Promise<{ status: number; body: any }> {
    const response = await fetch(`${server!.url}${url}`, {
      method, headers: { authorization: `Bearer ${token}`, ...(body === undefined ? {} : { 'content-type': 'application/json' }) }, body: body === undefined ? undefined : JSON.stringify(body),
    });
    return { status: response.status, body: await response.json() };
  }

  const start = () => startServer({ ...database.env, PITCREW_EGRESS_ALLOW_NETWORKS: '127.0.0.0/8' });
  const incidents = async (integrationId: string) => {
    const store = database.open();
    try {
      return await store.db.selectFrom('incidents').select(['incident_key', 'state', 'opened_at', 'resolved_at', 'occurrences']).where('integration_id', '=', integrationId).orderBy('incident_key').orderBy('opened_at').execute();
    } finally {
      await store.close();
    }
  };

  it('resumes from the page it was waiting for when a new process starts, and makes each incident once', async () => {
    onTestFailed(() => console.error(server?.output().slice(-6000)));
    server = await start();
    const made = await api('POST', '/api/v1/integrations', { name: 'monasca', type: 'monasca', config: { monascaUrl: cloud.url } });
    expect(made.status, JSON.stringify(made.body)).toBe(201);
    const id = made.body.id as string;
    const patched = await api('PATCH', `/api/v1/integrations/${id}`, {
      import: { enabled: false, lookbackDays: 2, secret: { version: 'v3', identityUrl: cloud.url, username: USER.username, password: USER.password, project: 'ops' } },
    });
    expect(patched.status, JSON.stringify(patched.body)).toBe(200);

    // Hold the fourth page of history: three are incidents when the process dies.
    let asked = 0;
    cloud.gate = (_method, path) => {
      if (path !== '/v2.0/alarms/state-history') return undefined;
      asked += 1;
      return asked === 4 ? new Promise<void>(() => undefined) : undefined;
    };
    const started = await api('POST', `/api/v1/integrations/${id}/import`);
    expect(started.status).toBe(202);
    await waitFor(() => asked === 4, 'the fourth page asked for', STEP_MS);
    await server.kill();
    const before = await incidents(id);
    // Nine transitions applied: the first ones of alarms 0-3 (opened and resolved), and the second firings of 0 and 1.
    expect(before.length).toBeGreaterThan(0);

    cloud.gate = undefined;
    const historyBefore = cloud.requests.filter((c) => c.path === '/v2.0/alarms/state-history').length;
    server = await start();
    const ended = await waitFor(async () => {
      const item = (await api('GET', `/api/v1/integrations/${id}/imports`)).body.items[0];
      return item?.state === 'succeeded' ? item : undefined;
    }, 'the import resumed and succeeded', 2 * STEP_MS);
    expect(ended).toMatchObject({ id: started.body.importId, imported: 17, pages: 6 });
    // The new process asked for pages four to six only.
    expect(cloud.requests.filter((c) => c.path === '/v2.0/alarms/state-history').length - historyBefore).toBe(3);

    const after = await incidents(id);
    expect(after.map((row) => [row.incident_key, row.state, row.occurrences])).toEqual([
      ['alarm-0', 'resolved', 1], ['alarm-0', 'resolved', 1], ['alarm-0', 'open', 1],
      ['alarm-1', 'resolved', 1], ['alarm-1', 'resolved', 1],
      ['alarm-2', 'resolved', 1], ['alarm-2', 'resolved', 1],
      ['alarm-3', 'resolved', 1], ['alarm-3', 'resolved', 1],
    ]);
    // What was there before the kill is unchanged by the resumed run.
    for (const row of before) expect(after).toContainEqual(row.state === 'resolved' ? row : { ...row, state: expect.any(String), resolved_at: expect.anything() });
    expect((await api('GET', `/api/v1/integrations/${id}`)).body.import.status).toMatchObject({ state: 'succeeded', imported: 17, importedTotal: 17 });
    expect(cloud.unexpected).toEqual([]);
  }, 4 * STEP_MS);
});
