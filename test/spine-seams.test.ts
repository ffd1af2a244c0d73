import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import type { ActionKind } from '../src/actions/kind.js';
import type { RunEnd, ServiceRunner } from '../src/executions/service-executor.js';
import type { Occurrence } from '../src/ingest/occurrence.js';
import type { OccurrenceResult } from '../src/ingest/writer.js';
import { parseAlertPayload } from '../src/ingress/payload.js';
import type { ExecutionRow } from '../src/store/schema.js';
import { startTestEnv, scriptRule, type TestEnv } from './support/app.js';
import { testDialects } from './support/databases.js';
import { createChannel, waitState } from './support/notify.js';
import { startReceiver, type Receiver } from './support/receivers.js';
import { waitFor } from './support/wait.js';

/*
 * The seams of the spine (docs/architecture.md): an action kind and a source of occurrences made
 * here, in this file only, run through the real decision, action limit, execution lifecycle and
 * notification, as the built-in ones do.
 */

/** A kind the service runs itself: "echo" a message about the payload's host. */
const echoKind: ActionKind = {
  type: 'echo',
  escalatesAtLimit: false,
  plan: (_rule, event) => (event.hostName ? { runsOn: 'service', runs: [{ about: event.hostName }] } : 'echo needs a HostName'),
  spec: (rule, run) => ({ kind: 'echo', message: (rule.action as unknown as { message: string }).message, about: run.hostname, timeoutSeconds: 30 }),
  describe: (spec) => `echo "${String(spec.message)}"`,
  notDone: (_rule, hostname) => `did not echo about ${hostname}`,
};

/** A kind whose run never ends by itself: the executor's timeout ends it. */
const stallKind: ActionKind = {
  ...echoKind,
  type: 'stall',
  spec: () => ({ kind: 'stall', timeoutSeconds: 1 }),
  describe: () => 'stall',
};

class EchoRunner implements Extract<ServiceRunner, { mode: 'in_process' }> {
  readonly kind = 'echo';
  readonly mode = 'in_process';
  readonly ran: string[] = [];

  run(execution: ExecutionRow): Promise<RunEnd> {
    this.ran.push(execution.id);
    const spec = JSON.parse(execution.spec) as { message: string; about: string };
    return Promise.resolve({ state: 'succeeded', reason: `echoed "${spec.message}" about ${spec.about}` });
  }
}

/** A kind whose runner never has room (a tenant's CLI cap, full): its runs stay queued. */
const waitKind: ActionKind = { ...echoKind, type: 'wait', spec: () => ({ kind: 'wait', timeoutSeconds: 30 }), describe: () => 'wait' };
const waitRunner: ServiceRunner = { kind: 'wait', mode: 'in_process', admit: () => undefined, run: () => Promise.reject(new Error('never admitted')) };

const stallRunner: ServiceRunner = {
  kind: 'stall',
  mode: 'in_process',
  run: (_execution, signal) => new Promise((_resolve, reject) => signal.addEventListener('abort', () => reject(new Error('stopped')))),
};

describe.each(testDialects())('a kind and a source of occurrences made in a test, on %s', (dialect) => {
  let env: TestEnv;
  let receiver: Receiver;
  const echo = new EchoRunner();

  beforeAll(async () => {
    env = await startTestEnv(dialect, { extraKinds: { kinds: [echoKind, stallKind, waitKind], runners: [echo, stallRunner, waitRunner] }, notify: { groupWaitSeconds: 0 } });
    receiver = await startReceiver();
    await createChannel(env, { name: 'all', type: 'webhook', mode: 'all', config: { url: `${receiver.url}/hook`, secret: 'whsec-spine-0123456789' } });
  });
  afterAll(() => env.close());

  /** A rule of the test's own kind: stored as the rules API stores one, then given the kind's action. */
  async function ruleOf(action: Record<string, unknown>, overrides: Record<string, unknown> = {}): Promise<string> {
    const rule = await env.createWebhookRule(scriptRule(overrides));
    await env.store.db.updateTable('rules').set({ action: JSON.stringify(action) }).where('id', '=', rule.id).execute();
    return rule.id;
  }

  /** The test's source: raises a rule by its id, as the service itself would (a schedule). */
  function raise(ruleId: string, body: Record<string, unknown>, credential: Occurrence['credential'] = { kind: 'service' }): Promise<OccurrenceResult> {
    const parsed = parseAlertPayload(body);
    if (!parsed.ok) throw new Error(JSON.stringify(parsed.errors));
    return env.app.context.writer.submit({ tenantId: env.tenant.tenantId, rule: { by: 'rule', ruleId }, source: 'manual', sourceIp: null, receivedAt: Date.now(), credential, payload: parsed.payload });
  }

  it('decides, limits, runs once on the service, records the lifecycle and notifies', async () => {
    const ruleId = await ruleOf({ type: 'echo', message: 'hello' }, { actionLimit: { max: 2, windowSeconds: 3600 } });
    const results = [];
    for (let i = 0; i < 3; i++) results.push(await raise(ruleId, { HostName: 'db-1', AlarmName: 'disk_full' }));
    expect(results.map((r) => (r.status === 'stored' ? r.outcome : r.status))).toEqual(['accepted', 'accepted', 'limited']);
    const limited = results[2] as Extract<OccurrenceResult, { status: 'stored' }>;
    expect(limited.reason).toMatch(/action limit reached about host db-1: 2 executions within 3600 s already \(max 2\)/);
    expect(limited.executionIds).toEqual([]);

    const ids = results.slice(0, 2).flatMap((r) => (r.status === 'stored' ? r.executionIds : []));
    expect(ids).toHaveLength(2);
    for (const id of ids) {
      const execution = await waitState(env, id, 'succeeded');
      expect(execution).toMatchObject({ hostId: null, hostname: 'db-1', actionType: 'echo', reason: 'echoed "hello" about db-1' });
      expect((execution.transitions as Array<{ to: string }>).map((t) => t.to)).toEqual(['queued', 'dispatched', 'running', 'succeeded']);
    }
    expect([...echo.ran].sort()).toEqual([...ids].sort());

    const event = (await env.api('GET', `/api/v1/events/${(results[0] as { eventId: string }).eventId}`)).json();
    expect(event).toMatchObject({ source: 'manual', sourceIp: null, outcome: 'accepted', executionCount: 1 });

    await waitFor(() => receiver.accepted().some((r) => r.raw.includes('echo \\"hello\\"') || r.raw.includes('echo "hello"')), 'a notification naming the echo action');
  });

  it('ends a run past its timeout as timed_out', async () => {
    const ruleId = await ruleOf({ type: 'stall' });
    const stored = await raise(ruleId, { HostName: 'db-2' });
    if (stored.status !== 'stored') throw new Error(stored.status);
    const execution = await waitState(env, stored.executionIds[0]!, 'timed_out');
    expect(execution.reason).toMatch(/past its timeout of 1 s/);
  });

  it("runs another tenant's work while more than a pass of one tenant's runs wait for room", async () => {
    const waiting = await ruleOf({ type: 'wait' });
    for (let i = 0; i < 120; i++) expect((await raise(waiting, { HostName: `w-${i}` })).status).toBe('stored');
    const other = await env.addTenant(`patient-${dialect}`);
    const rule = await env.createWebhookRule(scriptRule(), other.token);
    await env.store.db.updateTable('rules').set({ action: JSON.stringify({ type: 'echo', message: 'not hidden' }) }).where('id', '=', rule.id).execute();
    const stored = await env.app.context.writer.submit({
      tenantId: other.tenantId, rule: { by: 'rule', ruleId: rule.id }, source: 'manual', sourceIp: null, receivedAt: Date.now(), credential: { kind: 'service' }, payload: (parseAlertPayload({ HostName: 'b-1' }) as { payload: Occurrence['payload'] }).payload,
    });
    if (stored.status !== 'stored') throw new Error(stored.status);
    const state = async () => (await env.store.db.selectFrom('executions').select('state').where('id', '=', stored.executionIds[0]!).executeTakeFirstOrThrow()).state;
    await waitFor(async () => (await state()) === 'succeeded', "the other tenant's run", 10_000);
    const stillQueued = await env.store.db.selectFrom('executions').select(({ fn }) => fn.countAll<number>().as('n')).where('tenant_id', '=', env.tenant.tenantId).where('state', '=', 'queued').executeTakeFirstOrThrow();
    expect(Number(stillQueued.n)).toBe(120);
  });

  it('checks the credential an occurrence carries in the transaction: an unknown key fails at once', async () => {
    const ruleId = await ruleOf({ type: 'echo', message: 'x' });
    const refused = await raise(ruleId, { HostName: 'db-3' }, { kind: 'api_key', keyId: '00000000-0000-7000-8000-000000000000' });
    expect(refused).toEqual({ status: 'revoked_key' });
    const other = await env.addTenant(`other-${dialect}`);
    const foreign = await env.app.context.writer.submit({
      tenantId: other.tenantId, rule: { by: 'rule', ruleId }, source: 'manual', sourceIp: null, receivedAt: Date.now(), credential: { kind: 'service' }, payload: (parseAlertPayload({}) as { payload: Occurrence['payload'] }).payload,
    });
    expect(foreign).toEqual({ status: 'no_rule' });
  });
});
