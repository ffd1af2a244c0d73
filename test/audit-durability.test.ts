import { sql } from 'kysely';
import { afterAll, afterEach, beforeAll, describe, expect, it } from 'vitest';
import { scriptRule, startTestEnv, type TestEnv } from './support/app.js';
import { testDialects } from './support/databases.js';

/*
 * A rule changed through the API and its audit entry are one transaction (rules/routes.ts with
 * identity/audit/recorder.ts recordInChange): one commit, one sync, on disk before the reply.
 * Should the entry not be written, the change is not made either and the caller gets an error;
 * should the sync fail, the caller gets an error, not a success.
 * The store's flush is counted by wrapping it (on PostgreSQL a commit is durable when it answers,
 * and the flush is the same call, a no-op).
 */
describe.each(testDialects())('a rule change and its audit entry made durable on %s', (dialect) => {
  let env: TestEnv;
  let ruleId: string;
  let flushes: number;
  let failFlush: boolean;
  let realFlush: () => Promise<void>;

  beforeAll(async () => {
    env = await startTestEnv(dialect);
    const made = await env.api('POST', '/api/v1/rules', scriptRule());
    expect(made.statusCode, made.body).toBe(201);
    ruleId = made.json().id as string;
    const durability = env.store.durability;
    realFlush = durability.flush.bind(durability);
    durability.flush = () => {
      flushes++;
      return failFlush ? Promise.reject(new Error('fdatasync: input/output error')) : realFlush();
    };
  });
  afterEach(async () => {
    failFlush = false;
    await dropRefusal();
  });
  afterAll(async () => {
    if (env) env.store.durability.flush = realFlush;
    await env?.close();
  });

  const entries = async () => (await env.store.db.selectFrom('audit_log').select(['action', 'target_id']).where('target_id', '=', ruleId).execute()).filter((row) => row.action === 'rule.update');
  const enabled = async () => (await env.store.db.selectFrom('rules').select('enabled').where('id', '=', ruleId).executeTakeFirstOrThrow()).enabled;
  const patch = async (value: boolean) => {
    flushes = 0;
    return env.api('PATCH', `/api/v1/rules/${ruleId}`, { enabled: value });
  };

  /** Makes every insert into the audit log fail, as a full disk or a broken table would. */
  async function refuseAuditEntries(): Promise<void> {
    if (dialect === 'sqlite') {
      await sql`create trigger refuse_audit before insert on audit_log begin select raise(abort, 'audit log refused'); end`.execute(env.store.db);
      return;
    }
    await sql`create or replace function refuse_audit() returns trigger language plpgsql as $$ begin raise exception 'audit log refused'; end $$`.execute(env.store.db);
    await sql`create trigger refuse_audit before insert on audit_log for each row execute function refuse_audit()`.execute(env.store.db);
  }
  async function dropRefusal(): Promise<void> {
    if (dialect === 'sqlite') await sql`drop trigger if exists refuse_audit`.execute(env.store.db);
    else await sql`drop trigger if exists refuse_audit on audit_log`.execute(env.store.db);
  }

  it('syncs once for the change and its entry', async () => {
    const before = (await entries()).length;
    const reply = await patch(false);
    expect(reply.statusCode, reply.body).toBe(200);
    expect(reply.json().enabled).toBe(false);
    expect(flushes).toBe(1);
    expect(await enabled()).toBeFalsy();
    expect((await entries()).length).toBe(before + 1);
  });

  it('makes no change when its entry cannot be written', async () => {
    await refuseAuditEntries();
    const before = (await entries()).length;
    const reply = await patch(true);
    expect(reply.statusCode, reply.body).toBeGreaterThanOrEqual(500);
    expect(reply.headers['content-type']).toContain('application/problem+json');
    // Rolled back with its entry: nothing was committed, so nothing to sync.
    expect(flushes).toBe(0);
    expect(await enabled()).toBeFalsy();
    expect((await entries()).length).toBe(before);
  });

  it('writes one entry with one sync for a rule made and one deleted', async () => {
    flushes = 0;
    const made = await env.api('POST', '/api/v1/rules', scriptRule({ name: 'made-and-deleted' }));
    expect(made.statusCode, made.body).toBe(201);
    const id = made.json().id as string;
    expect(flushes).toBe(1);
    flushes = 0;
    const gone = await env.api('DELETE', `/api/v1/rules/${id}`);
    expect(gone.statusCode, gone.body).toBe(204);
    expect(flushes).toBe(1);
    const logged = await env.store.db.selectFrom('audit_log').select(['action', 'after']).where('target_id', '=', id).orderBy('id').execute();
    expect(logged.map((row) => row.action)).toEqual(['rule.create', 'rule.delete']);
    // The entry's after is the view the 201 gave.
    expect(JSON.parse(logged[0]!.after!)).toEqual(made.json());
  });

  it('answers an error, not a success, when the change cannot be synced', async () => {
    failFlush = true;
    const reply = await patch(false);
    expect(reply.statusCode, reply.body).toBeGreaterThanOrEqual(500);
    expect(reply.headers['content-type']).toContain('application/problem+json');
    expect(flushes).toBe(1);
  });
});
