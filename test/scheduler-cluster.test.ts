import { afterAll, describe, expect, it } from 'vitest';
import { createTestDatabase, testDialects, type TestDatabase } from './support/databases.js';
import { runCli, startServer, type ServerProcess } from './support/process.js';
import { waitFor } from './support/wait.js';

/*
 * Issue 18: three `pitcrew server` processes on one PostgreSQL fire each tick of a per-second
 * schedule once, over many ticks, and still once when one of them is killed mid-way (SIGKILL, no
 * shutdown code) and another starts in its place: a tick is claimed in the database, not by a timer
 * on each node.
 */
describe.skipIf(!testDialects().includes('postgres'))('a schedule on three server processes of one PostgreSQL', { timeout: 120_000 }, () => {
  let database: TestDatabase | undefined;
  const servers: ServerProcess[] = [];
  afterAll(async () => {
    await Promise.all(servers.map((server) => server.kill()));
    await database?.drop();
  });

  it('fires each tick once over many ticks, across a node killed and a node started', async () => {
    database = await createTestDatabase('postgres');
    const { token } = JSON.parse((await runCli(['bootstrap', '--json'], database.env)).stdout) as { token: string };
    for (let i = 0; i < 3; i += 1) servers.push(await startServer(database.env));
    const api = async (server: ServerProcess, method: string, path: string, body?: unknown) => {
      const response = await fetch(`${server.url}${path}`, { method, headers: { authorization: `Bearer ${token}`, ...(body ? { 'content-type': 'application/json' } : {}) }, body: body ? JSON.stringify(body) : undefined });
      return { status: response.status, body: (await response.json()) as { id: string } };
    };
    const made = await api(servers[0]!, 'POST', '/api/v1/rules', {
      name: 'every second', trigger: { type: 'cron', schedule: '* * * * * *', overlap: 'allow' }, action: { type: 'script', flavour: 'diagnostics', runbook: { script: 'true' } },
      target: { type: 'specific_host', hostname: 'nowhere-1' }, infrastructureType: 'On_Premise',
    });
    expect(made.status).toBe(201);
    const store = database.open();
    try {
      const ticks = async () => (await store.db.selectFrom('events').select('payload').where('rule_id', '=', made.body.id).execute()).map((row) => Date.parse((JSON.parse(row.payload) as { scheduledTime: string }).scheduledTime));
      await waitFor(async () => (await ticks()).length >= 4, 'four ticks', 30_000);
      await servers[1]!.kill();
      servers.push(await startServer(database.env));
      const before = (await ticks()).length;
      await waitFor(async () => (await ticks()).length >= before + 5, 'five more ticks', 30_000);
      expect((await api(servers[3]!, 'PATCH', `/api/v1/rules/${made.body.id}`, { enabled: false })).status).toBe(200);
      await Promise.all(servers.filter((server) => server !== servers[1]).map((server) => server.stop()));

      const seen = (await ticks()).sort((x, y) => x - y);
      expect(seen.length).toBeGreaterThanOrEqual(9);
      expect(new Set(seen).size).toBe(seen.length);
      // One second apart, none skipped: the nodes left, then the new one, took every tick in turn.
      for (let i = 1; i < seen.length; i += 1) expect(seen[i]! - seen[i - 1]!).toBe(1000);
      const outcomes = await store.db.selectFrom('events').select('outcome').where('rule_id', '=', made.body.id).execute();
      expect(new Set(outcomes.map((row) => row.outcome))).toEqual(new Set(['no_target']));
    } finally {
      await store.close();
    }
  });
});
