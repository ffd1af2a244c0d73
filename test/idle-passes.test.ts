import { DefaultQueryCompiler, type CompiledQuery } from 'kysely';
import { afterEach, describe, expect, it, vi } from 'vitest';
import { preparedQuery } from '../src/store/prepared.js';
import { startTestEnv, type TestEnv } from './support/app.js';
import { testDialects } from './support/databases.js';
import { waitFor } from './support/wait.js';

/*
 * An idle server's background duties poll the database every second or so. Kysely builds and
 * compiles a query anew on each call, which was most of an idle server's CPU (bench/idle.js), so
 * each poll's statement is built once (store/prepared.ts) and run with the pass's values. The
 * clock is frozen: the sweeper's once-a-minute and every-10-s duties run at its first sweep only.
 */
describe.each(testDialects())('idle duties on %s', (dialect) => {
  let env: TestEnv | undefined;
  afterEach(async () => {
    vi.restoreAllMocks();
    await env?.close();
    env = undefined;
  });

  it('compile no query once each has polled: they run the statements built at their first pass', async () => {
    env = await startTestEnv(dialect, { clock: () => Date.parse('2026-11-29T12:00:00Z'), schedulerIntervalMs: 100, importPollMs: 100 });
    const { notifier, executor, scheduler, imports, rollups, store } = env.app.context;
    const passes = async () => {
      await notifier.pass();
      await executor.runOnce();
      await scheduler.pass();
      await imports.runPass();
      await rollups.refreshAll();
    };
    // The duties on timers of their own (the sweeper, the runbook stage, the scheduler's next tick): counted by what they run.
    const ran = vi.spyOn(store.db.getExecutor(), 'executeQuery');
    const polled = (fragment: string, times: number) => waitFor(() => ran.mock.calls.filter(([query]) => (query as CompiledQuery).sql.includes(fragment)).length >= times, `${times} polls running ${fragment}`);
    const timed = async (times: number) => {
      await polled('select "id", "tenant_id", "queued_at", "approval" from "executions"', times);
      await polled('"awaiting_runbook"', times);
      await polled('min("next_at")', times);
    };
    await passes();
    await timed(1);
    ran.mockClear();
    const compiled = vi.spyOn(DefaultQueryCompiler.prototype, 'compileQuery');
    await passes();
    await passes();
    await timed(2);
    expect(compiled.mock.results.map((result) => (result.value as CompiledQuery).sql)).toEqual([]);
    // With no agent connected here, the sweep does not look for work to send on connections here.
    expect(ran.mock.calls.filter(([query]) => (query as CompiledQuery).sql.includes('"hosts"."node_id"'))).toEqual([]);
  });

  it('a statement built once reads what the query built anew reads, with each call its own values', async () => {
    env = await startTestEnv(dialect);
    const { db } = env.app.context.store;
    const tenantId = env.tenant.tenantId;
    const channel = (id: string, createdAt: number) => ({ id, tenant_id: tenantId, name: id, type: 'webhook', config: '{}', mode: 'all', created_at: createdAt, updated_at: createdAt });
    await db.insertInto('notify_channels').values([channel('c1', 100), channel('c2', 200), channel('c3', 300)]).execute();
    const built = (after: number, limit: number) => db.selectFrom('notify_channels').select('id').where('tenant_id', '=', tenantId).where('created_at', '>', after).orderBy('id').limit(limit);
    const prepared = preparedQuery((kysely, tenant: string, after: number, limit: number) => kysely.selectFrom('notify_channels').select('id').where('tenant_id', '=', tenant).where('created_at', '>', after).orderBy('id').limit(limit));
    for (const [after, limit] of [[0, 10], [150, 10], [0, 2], [250, 1], [300, 5]] as const) {
      expect(await prepared(db, tenantId, after, limit)).toEqual(await built(after, limit).execute());
    }
    // An update's rows, as the deliverer's claim reads them: the values set are the call's too.
    const rename = preparedQuery((kysely, name: string, id: string) => kysely.updateTable('notify_channels').set({ name }).where('id', '=', id).returning(['id', 'name']));
    expect(await rename(db, 'first', 'c1')).toEqual([{ id: 'c1', name: 'first' }]);
    expect(await rename(db, 'second', 'c2')).toEqual([{ id: 'c2', name: 'second' }]);
    expect(await db.selectFrom('notify_channels').select(['id', 'name']).orderBy('id').execute()).toEqual([{ id: 'c1', name: 'first' }, { id: 'c2', name: 'second' }, { id: 'c3', name: 'c3' }]);
  });
});
