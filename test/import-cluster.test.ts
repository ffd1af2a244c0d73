import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { createTestDatabase, testDialects, type TestDatabase } from './support/databases.js';
import { emulatedAlarm, startKeystoneMonasca, transition, type KeystoneMonasca } from './support/keystone-monasca.js';
import { createObservationTable, storedObservations, tableSink } from './support/observation-table.js';
import { startTestEnv, type TestEnv } from './support/app.js';
import { waitFor } from './support/wait.js';

/*
 * Issue 38.2: imports run once across a cluster. Two service nodes share one PostgreSQL: both look
 * for due imports at the same moment, round after round, and one import per due time is queued
 * and run by one node (a compare-and-set on the schedule, then a claim). A node taken for dead in
 * the middle of a page is taken over by the other, which continues from the cursor; when the first
 * comes back with its page, the claim it held no longer holds and nothing it read is applied.
 * (Nodes' sweepers are slowed down: the test says which node is dead, as a sweeper would.)
 */
const USER = { username: 'reader', password: 'reader-password-57', projects: ['ops'] };
const HOUR = 3_600_000;

describe.each(testDialects().filter((dialect) => dialect === 'postgres'))('imports on two nodes sharing %s', (dialect) => {
  let database: TestDatabase;
  let a: TestEnv;
  let b: TestEnv;
  let cloud: KeystoneMonasca;
  const now = Date.now();

  beforeAll(async () => {
    database = await createTestDatabase(dialect);
    const store = database.open();
    await createObservationTable(store);
    await store.close();
    cloud = await startKeystoneMonasca([USER]);
    const project = cloud.projects.get('ops')!;
    for (const [i, host] of ['web-1', 'web-2', 'web-3'].entries()) {
      project.alarms.push(emulatedAlarm(`alarm-${i}`, { id: 'def', name: 'high cpu', severity: 'HIGH' }, host, now - 10 * 86_400_000));
      transition(project, `alarm-${i}`, 'ALARM', now - (5 - i) * HOUR);
      transition(project, `alarm-${i}`, 'OK', now - (5 - i) * HOUR + 600_000);
    }
    cloud.maxLimit = 2;
    a = await startTestEnv(dialect, { database, importSink: tableSink, sweepIntervalMs: HOUR });
    b = await startTestEnv(dialect, { database, importSink: tableSink, sweepIntervalMs: HOUR });
  });

  afterAll(async () => {
    await a?.close();
    await b?.close();
    await cloud?.close();
    await database?.drop();
  });

  async function integration(name: string, intervalSeconds: number): Promise<string> {
    const made = await a.api('POST', '/api/v1/integrations', { name, type: 'monasca', config: { monascaUrl: cloud.url } });
    const id = made.json().id as string;
    const patched = await a.api('PATCH', `/api/v1/integrations/${id}`, {
      import: { enabled: true, intervalSeconds, secret: { version: 'v3', identityUrl: cloud.url, username: USER.username, password: USER.password, project: 'ops' } },
    });
    expect(patched.statusCode, patched.body).toBe(200);
    return id;
  }

  const importsOf = (id: string) => a.store.db.selectFrom('imports').selectAll().where('integration_id', '=', id).orderBy('id').execute();

  it('queues and runs one import per due time, whichever node looks, round after round', async () => {
    const id = await integration('scheduled', 600);
    const start = Date.now() + 1000;
    const rounds = 6;
    for (let round = 0; round < rounds; round++) {
      const at = start + round * 600_000;
      await Promise.all([a.app.context.imports.runPass(at), b.app.context.imports.runPass(at)]);
      await Promise.all([a.app.context.imports.idle(), b.app.context.imports.idle()]);
      const imports = await importsOf(id);
      expect(imports, `round ${round}`).toHaveLength(round + 1);
      expect(imports.every((row) => row.state === 'succeeded' && row.trigger === 'schedule')).toBe(true);
    }
    // A second look at a time already handled queues nothing.
    await Promise.all([a.app.context.imports.runPass(start + (rounds - 1) * 600_000), b.app.context.imports.runPass(start + (rounds - 1) * 600_000)]);
    expect(await importsOf(id)).toHaveLength(rounds);
    // Six transitions and what is open (none) once: the first import; the others found nothing new.
    const imports = await importsOf(id);
    expect(imports.map((row) => row.imported)).toEqual([6, 0, 0, 0, 0, 0]);
    const stored = await storedObservations(a.store.db, id);
    expect(stored.filter((row) => row.state !== 'open_keys')).toHaveLength(6);
    expect(new Set(imports.map((row) => row.node_id))).toEqual(new Set([null]));
    expect(cloud.unexpected).toEqual([]);
  });

  it('lets the other node take over an import whose node was taken for dead mid-page, and applies nothing the first node read after', async () => {
    const id = await integration('taken-over', 3600);
    let held: (() => void) | undefined;
    cloud.gate = (_method, path) => {
      if (path !== '/v2.0/alarms/state-history' || held) return undefined;
      return new Promise<void>((resolve) => (held = resolve));
    };
    const start = Date.now() + 1000;
    await a.app.context.imports.runPass(start);
    await waitFor(() => held !== undefined, 'node A asked for its first page');
    const [running] = await importsOf(id);
    expect(running).toMatchObject({ state: 'running', pages: 0 });

    // Node A is gone as far as the cluster knows (its sweeper's row removed, as another node's sweeper does for a dead node).
    await b.store.db.deleteFrom('nodes').where('id', '=', running!.node_id!).execute();
    await b.app.context.imports.runPass(start);
    await b.app.context.imports.idle();
    const [takenOver] = await importsOf(id);
    expect(takenOver).toMatchObject({ id: running!.id, state: 'succeeded', imported: 6, pages: 3 });

    // Node A's page comes back: its claim no longer holds, and it applies nothing.
    held!();
    await a.app.context.imports.idle();
    expect(await importsOf(id)).toEqual([takenOver]);
    const stored = await storedObservations(a.store.db, id);
    expect(stored.filter((row) => row.state !== 'open_keys')).toHaveLength(6);
    expect(stored.filter((row) => row.state === 'open_keys')).toHaveLength(1);
    cloud.gate = undefined;
  });
});
