import path from 'node:path';
import SqliteDatabase from 'better-sqlite3';
import { Kysely, SqliteDialect, type CompiledQuery } from 'kysely';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { Retention } from '../src/retention/retention.js';
import { insertSnapshots } from '../src/snapshots/repository.js';
import { newId } from '../src/store/ids.js';
import type { Database } from '../src/store/schema.js';
import { startTestEnv, type TestEnv } from './support/app.js';
import { testDialects } from './support/databases.js';
import { createChannel, waitDelivered } from './support/notify.js';
import { startReceiver, type Receiver } from './support/receivers.js';
import { waitFor } from './support/wait.js';

const DAY = 86_400_000;
// Ids (UUIDv7) never go back in time within a process (store/ids.ts), so each suite below lives
// in a later stretch of time than the one before it.
let epoch = Date.now();
function laterEpoch(): number {
  epoch += 1000 * DAY;
  return epoch;
}

describe.each(testDialects())('history retention on %s', (dialect) => {
  let env: TestEnv;
  let failing: Receiver;
  // Ingress and the ledger go by this clock, so the ids they make (UUIDv7) carry its time.
  let start = 0;
  let now = 0;
  const old: Record<string, string> = {};
  const recent: Record<string, string> = {};

  const fire = async (triggerId: string, body: Record<string, unknown>) => {
    const reply = await env.webhook(triggerId, body);
    expect(reply.statusCode, reply.body).toBe(202);
    return reply.json() as { eventId: string; outcome: string; executionIds: string[] };
  };
  const snapshotOf = (executionId: string, eventId: string) => ({
    tenantId: env.tenant.tenantId, executionId, eventId, position: 0, title: 'load', query: 'node_load1', contentType: 'image/png', width: 1, height: 1, image: new Uint8Array([137, 80, 78, 71]),
  });
  const count = async (table: keyof Database, column: string, value: string) =>
    Number((await env.store.db.selectFrom(table).select(({ fn }) => fn.countAll<number>().as('n')).where(column as never, '=', value as never).executeTakeFirstOrThrow()).n);
  const exists = async (table: 'events' | 'executions' | 'escalations' | 'notify_messages' | 'alerts' | 'incidents' | 'audit_log', id: string) => (await count(table, 'id', id)) === 1;
  // An alert an integration took (its log keeps it whether or not a rule matched it).
  let alertmanager = '';
  const alert = async (instance: string, status = 'firing') => {
    const at = new Date(now).toISOString();
    const body = { version: '4', status, receiver: 'pitcrew', alerts: [{ status, labels: { alertname: 'Old', instance }, annotations: {}, startsAt: at, endsAt: at, fingerprint: instance }] };
    const reply = await env.app.server.inject({ method: 'POST', url: `/api/v1/trigger/channel/alertmanager/${env.tenant.apiKey}/${alertmanager}`, headers: { 'content-type': 'application/json' }, payload: body });
    expect(reply.statusCode, reply.body).toBe(202);
    return (await env.store.db.selectFrom('alerts').select('id').where('host_name', '=', instance).orderBy('id').executeTakeFirstOrThrow()).id;
  };
  // An import of an integration's tool, as the import runner leaves it (src/imports/repository.ts), started now.
  const importRun = async (integrationId: string, state: 'queued' | 'succeeded' | 'failed') => {
    const id = newId(now);
    const ended = state !== 'queued';
    await env.store.db.insertInto('imports').values({
      id, tenant_id: env.tenant.tenantId, integration_id: integrationId, trigger: 'schedule', state, queued_at: now, started_at: ended ? now : null, ended_at: ended ? now + 1000 : null,
      imported: 2, pages: 1, error: state === 'failed' ? 'Monasca refused GET http://monasca:8070/v2.0/alarms: HTTP 503' : null, cursor: null, node_id: null, claim: null,
    }).execute();
    return id;
  };
  const importIds: Record<'busy' | 'rare' | 'queued', string[]> = { busy: [], rare: [], queued: [] };
  // The incident of an alert (incidents/): its alarm is the instance here.
  const incidentOf = async (instance: string) => (await env.store.db.selectFrom('incidents').select('id').where('hostname', '=', instance).executeTakeFirstOrThrow()).id;

  beforeAll(async () => {
    start = laterEpoch();
    now = start;
    // Retries an hour apart: a failed delivery stays pending for the whole test. The sweeper runs
    // at start only: once the clock jumps it would end the stuck execution lost (its timeout is
    // long past), and the test is about what retention does with one still under way.
    env = await startTestEnv(dialect, { clock: () => now, executionExpirySeconds: 3600, sweepIntervalMs: 3_600_000, notify: { backoffBaseMs: 3_600_000, backoffMaxMs: 3_600_000 } });
    const host = await env.enrol('web-1');
    const heard = await env.createWebhookRule({ name: 'heard', actionLimit: { max: 1, windowSeconds: 60 } });
    const unheard = await env.createWebhookRule({ name: 'unheard' });
    const delivering = await startReceiver();
    failing = await startReceiver();
    failing.answer(500);
    const good = await createChannel(env, { name: 'good', type: 'slack', mode: 'all', ruleIds: [heard.id], config: { webhookUrl: delivering.url } });
    await createChannel(env, { name: 'down', type: 'slack', mode: 'all', ruleIds: [unheard.id], config: { webhookUrl: failing.url } });

    // Sixty days ago, as far as pitcrew can tell.
    alertmanager = (await env.api('POST', '/api/v1/integrations', { name: 'prometheus', type: 'alertmanager' })).json().id;
    old.alert = await alert('old-1');
    // Incidents: one resolved then, one open since then (still going on, kept whatever its age).
    await alert('old-1', 'resolved');
    old.incident = await incidentOf('old-1');
    await alert('old-open');
    old.openIncident = await incidentOf('old-open');
    // Imports: a busy integration's five then (the newest three of it are kept: three of these go),
    // a rarely imported one's two, and one still queued (under way: kept however old).
    for (const state of ['succeeded', 'failed', 'succeeded', 'succeeded', 'failed'] as const) importIds.busy.push(await importRun('busy-integration', state));
    for (const state of ['succeeded', 'failed'] as const) importIds.rare.push(await importRun('rare-integration', state));
    importIds.queued.push(await importRun('queued-integration', 'queued'));
    const ran = await fire(heard.triggerId, { HostName: 'web-1' });
    old.ranEvent = ran.eventId;
    old.ran = ran.executionIds[0]!;
    const { ledger } = env.app.context;
    await ledger.claim(host.hostId, [old.ran], { sessionId: 'test-session', nodeId: 'test-node' });
    await ledger.result(host.hostId, {
      executionId: old.ran, ending: 'exited', exitCode: 0, signal: null, reason: null, startedAt: now, finishedAt: now, stdout: 'done', stderr: '',
      stdoutTruncated: false, stderrTruncated: false, artifacts: [{ name: 'report.txt', base64: Buffer.from('disk 91%').toString('base64') }], artifactsTruncated: false,
    });
    await insertSnapshots(env.store.db, [snapshotOf(old.ran, old.ranEvent)], now);
    const limited = await fire(heard.triggerId, { HostName: 'web-1' });
    expect(limited.outcome).toBe('limited');
    old.limitedEvent = limited.eventId;
    old.noTarget = (await fire(unheard.triggerId, { HostName: 'gone-1' })).eventId;
    const stuck = await fire(unheard.triggerId, { HostName: 'web-1' });
    old.stuckEvent = stuck.eventId;
    old.stuck = stuck.executionIds[0]!;
    await ledger.claim(host.hostId, [old.stuck], { sessionId: 'test-session', nodeId: 'test-node' }); // dispatched, its agent never answered
    const cancelled = await fire(unheard.triggerId, { HostName: 'web-1' });
    old.cancelled = cancelled.executionIds[0]!;
    expect((await env.api('POST', `/api/v1/executions/${old.cancelled}/cancel`)).statusCode).toBe(202);

    // The run's message and the escalation reach the good channel; the cancel's stays pending on the failing one.
    await waitDelivered(env, good.id, 2);
    await waitFor(() => failing.requests.length > 0, 'a first failed try on the failing channel');
    old.escalation = (await env.store.db.selectFrom('escalations').select(['id', 'state']).executeTakeFirstOrThrow()).id;
    await waitFor(async () => (await env.store.db.selectFrom('escalations').select('state').where('id', '=', old.escalation!).executeTakeFirstOrThrow()).state === 'notified', 'the escalation notified');
    old.delivered = (await env.store.db.selectFrom('notify_messages').select('id').where('rule_id', '=', heard.id).where('kind', '!=', 'escalation').executeTakeFirstOrThrow()).id;
    old.pending = (await env.store.db.selectFrom('notify_messages').select('id').where('rule_id', '=', unheard.id).executeTakeFirstOrThrow()).id;

    // Thirty days later: inside any retention period.
    now = start + 30 * DAY;
    const fresh = await fire(heard.triggerId, { HostName: 'web-1' });
    recent.event = fresh.eventId;
    recent.execution = fresh.executionIds[0]!;
    await insertSnapshots(env.store.db, [snapshotOf(recent.execution, recent.event)], now);
    recent.noTarget = (await fire(unheard.triggerId, { HostName: 'gone-1' })).eventId;
    recent.alert = await alert('recent-1');
    await alert('recent-1', 'resolved');
    recent.incident = await incidentOf('recent-1');
    importIds.busy.push(await importRun('busy-integration', 'succeeded'));
    // The audit log: the rules, channels and cancel above were recorded then; this setting now.
    expect((await env.api('PATCH', '/api/v1/tenant', { throttle: null })).statusCode).toBe(200);
    old.audit = (await env.store.db.selectFrom('audit_log').select('id').where('action', '=', 'rule.create').orderBy('id').executeTakeFirstOrThrow()).id;
    recent.audit = (await env.store.db.selectFrom('audit_log').select('id').where('action', '=', 'tenant.update').executeTakeFirstOrThrow()).id;
    now = start + 60 * DAY;
  });
  afterAll(() => env.close());

  it('deletes what ended before the period in batches, and keeps what is younger or still under way', async () => {
    const retention = new Retention({ db: env.store.db, dialect, days: 31, logger: env.app.server.log, metrics: env.app.context.metrics, batchSize: 1, keepImports: 3 });
    const first = await retention.pruneBatch(now);
    expect(first).toEqual({ executions: 1, events: 1, alerts: 1, incidents: 1, imports: 1, escalations: 1, notify_messages: 1, notify_attempts: 1, audit_log: 1 });
    let importsDeleted = first.imports;
    for (let i = 0; i < 10; i += 1) {
      const pruned = await retention.pruneBatch(now);
      importsDeleted += pruned.imports;
      if (Object.values(pruned).every((n) => n === 0)) break;
    }
    expect(await retention.pruneBatch(now)).toEqual({ executions: 0, events: 0, alerts: 0, incidents: 0, imports: 0, escalations: 0, notify_messages: 0, notify_attempts: 0, audit_log: 0 });
    // Imports: the busy integration's oldest three went; its newest three (two of them past the period) stay,
    // as do the rare one's two and the queued one; the imports list shows what is left.
    expect(importsDeleted).toBe(3);
    const left = await env.store.db.selectFrom('imports').select('id').orderBy('id').execute();
    expect(left.map((row) => row.id)).toEqual([...importIds.busy.slice(3, 5), ...importIds.rare, ...importIds.queued, importIds.busy[5]!].sort());
    expect(await exists('alerts', old.alert!)).toBe(false);
    expect(await exists('incidents', old.incident!)).toBe(false);
    expect(await exists('incidents', old.openIncident!)).toBe(true);
    expect(await exists('incidents', recent.incident!)).toBe(true);
    expect((await env.api('GET', `/api/v1/incidents/${old.incident}`)).statusCode).toBe(404);
    expect(await exists('alerts', recent.alert!)).toBe(true);
    expect(await exists('audit_log', old.audit!)).toBe(false);
    expect(await exists('audit_log', recent.audit!)).toBe(true);
    expect(await env.store.db.selectFrom('audit_log').select('action').where('id', '<', recent.audit!).execute()).toEqual([]);

    for (const id of [old.ran!, old.cancelled!]) {
      expect(await exists('executions', id), id).toBe(false);
      expect(await count('execution_transitions', 'execution_id', id)).toBe(0);
    }
    expect(await count('execution_artifacts', 'execution_id', old.ran!)).toBe(0);
    expect(await count('graph_snapshots', 'execution_id', old.ran!)).toBe(0);
    expect(await count('graph_snapshots', 'execution_id', recent.execution!)).toBe(1);
    for (const id of [old.ranEvent!, old.limitedEvent!, old.noTarget!]) expect(await exists('events', id), id).toBe(false);
    expect(await exists('escalations', old.escalation!)).toBe(false);
    expect(await exists('notify_messages', old.delivered!)).toBe(false);

    // Still under way: the execution, its transitions and its event stay, whatever their age.
    expect(await exists('executions', old.stuck!)).toBe(true);
    expect(await count('execution_transitions', 'execution_id', old.stuck!)).toBe(2);
    expect(await exists('events', old.stuckEvent!)).toBe(true);
    // A notification still to be delivered stays with its delivery.
    expect(await exists('notify_messages', old.pending!)).toBe(true);
    expect(await count('notify_deliveries', 'message_id', old.pending!)).toBe(1);
    // Younger than 31 days.
    for (const id of [recent.event!, recent.noTarget!]) expect(await exists('events', id), id).toBe(true);
    expect(await exists('executions', recent.execution!)).toBe(true);

    // What the API says of a deleted event and execution: gone, like any unknown id.
    expect((await env.api('GET', `/api/v1/events/${old.noTarget}`)).statusCode).toBe(404);
    expect((await env.api('GET', `/api/v1/executions/${old.ran}`)).statusCode).toBe(404);
    expect((await env.api('GET', `/api/v1/executions/${recent.execution}`)).statusCode).toBe(200);
  });
});

describe.each(testDialects())('the retention setting on %s', (dialect) => {
  let env: TestEnv;
  let now = 0;

  beforeAll(async () => {
    now = laterEpoch();
    env = await startTestEnv(dialect, { clock: () => now, retentionDays: 45, sweepIntervalMs: 50 });
  });
  afterAll(() => env.close());

  it('is shown with the tenant, and the sweeper deletes on its own, counting what it deleted', async () => {
    expect((await env.api('GET', '/api/v1/tenant')).json().retentionDays).toBe(45);
    const rule = await env.createWebhookRule();
    const reply = await env.webhook(rule.triggerId, { HostName: 'nowhere' });
    const eventId = reply.json().eventId as string;
    // The first pass already ran at start and found nothing: the next look is 10 minutes later.
    now += 46 * DAY;
    await waitFor(async () => (await env.api('GET', `/api/v1/events/${eventId}`)).statusCode === 404, 'the old event deleted by the sweeper');
    expect(await env.scrape()).toMatch(/pitcrew_retention_deleted_total\{table="events"\} 1\b/);
    expect(env.logs.join('')).toContain('deleted history past its retention period');
  });

  it('is null when history is kept for ever (the default)', async () => {
    const other = await startTestEnv(dialect);
    try {
      expect((await other.api('GET', '/api/v1/tenant')).json().retentionDays).toBeNull();
    } finally {
      await other.close();
    }
  });
});

// A batch runs beside ingest on SQLite's one writer: every statement must find its rows through
// an index, never read a whole table or sort one, however large the history has grown.
describe('a retention batch on sqlite', () => {
  let env: TestEnv;
  let now = 0;

  beforeAll(async () => {
    now = laterEpoch();
    env = await startTestEnv('sqlite', { clock: () => now });
  });
  afterAll(() => env.close());

  it('reads and deletes through indexes only', async () => {
    await env.enrol('web-1');
    const rule = await env.createWebhookRule();
    const reply = await env.webhook(rule.triggerId, { HostName: 'web-1' }, { headers: { 'idempotency-key': 'alert-1' } });
    expect((await env.api('POST', `/api/v1/executions/${reply.json().executionIds[0]}/cancel`)).statusCode).toBe(202);
    expect((await env.webhook(rule.triggerId, { HostName: 'gone-1' })).statusCode).toBe(202);
    now += 60 * DAY;

    const sqlite = new SqliteDatabase(path.join(env.database.dataDir, 'pitcrew.db'));
    const statements: CompiledQuery[] = [];
    const db = new Kysely<Database>({ dialect: new SqliteDialect({ database: sqlite }), log: (event) => void statements.push(event.query) });
    try {
      const pruned = await new Retention({ db, dialect: 'sqlite', days: 31, logger: env.app.server.log, metrics: env.app.context.metrics }).pruneBatch(now);
      expect(pruned).toMatchObject({ executions: 1, events: 2 });
      const plans = statements.filter((q) => !/^(begin|commit)/i.test(q.sql)).map((q) => ({
        sql: q.sql,
        plan: (sqlite.prepare(`explain query plan ${q.sql}`).all(...(q.parameters as unknown[])) as Array<{ detail: string }>).map((row) => row.detail),
      }));
      expect(plans.length).toBeGreaterThan(5);
      for (const { sql, plan } of plans) expect(plan.filter((step) => /^SCAN (?!CONSTANT)|TEMP B-TREE/.test(step)), sql).toEqual([]);
    } finally {
      await db.destroy();
    }
  });
});
