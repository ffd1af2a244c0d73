import fs from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { startTestEnv, type TestEnv } from './support/app.js';
import { spawnAgent, waitOnline, type AgentProcess } from './support/agents.js';
import { testDialects } from './support/databases.js';
import { invite } from './support/people.js';
import { waitFor } from './support/wait.js';

interface Transition { from: string | null; to: string; reason: string | null; decidedBy?: { userId: string; email: string | null; via: string; comment?: string } }
interface Execution { id: string; state: string; reason: string | null; stdout: string; approval: { role: string; deadline: string; approvedAt: string | null } | null; transitions?: Transition[] }

const TERMINAL = ['succeeded', 'failed', 'timed_out', 'cancelled', 'lost', 'expired', 'rejected'];

// Issue 42 (docs/approvals.md): a rule that asks for approval records the alert and prepares the
// run, and a real agent receives nothing until a person with the role says yes, once.
describe.each(testDialects())('approvals before a fix runs on %s', (dialect) => {
  let env: TestEnv;
  let agent: AgentProcess;
  const marks = fs.mkdtempSync(path.join(os.tmpdir(), 'pitcrew-approvals-'));

  beforeAll(async () => {
    env = await startTestEnv(dialect, { listen: true, sweepIntervalMs: 100 });
    const { httpsUrl, fingerprint } = env.listening!;
    agent = spawnAgent({ server: httpsUrl, apiKey: env.tenant.apiKey, hostname: 'db-1', tags: ['db'], fingerprint });
    await waitOnline(env.api, 'db-1');
  });
  afterAll(async () => {
    await agent.stop();
    await env.close();
    fs.rmSync(marks, { recursive: true, force: true });
  });

  /** A rule whose script leaves a line in its own file each time it runs: the file says how often the agent ran it. */
  async function markingRule(name: string, overrides: Record<string, unknown> = {}) {
    const file = path.join(marks, name);
    const rule = await env.createWebhookRule({ action: { type: 'script', flavour: 'autofix', runbook: { script: `echo ran >> '${file}'` } }, ...overrides });
    return { ...rule, runs: () => (fs.existsSync(file) ? fs.readFileSync(file, 'utf8').split('\n').filter(Boolean).length : 0) };
  }
  async function fire(triggerId: string): Promise<string> {
    const reply = await env.webhook(triggerId, { HostName: 'db-1', AlarmName: 'disk_full' });
    expect(reply.statusCode, reply.body).toBe(202);
    return (reply.json().executionIds as string[])[0]!;
  }
  const get = async (id: string): Promise<Execution> => (await env.api('GET', `/api/v1/executions/${id}`)).json();
  const ended = (id: string) => waitFor(async () => {
    const e = await get(id);
    return TERMINAL.includes(e.state) ? e : undefined;
  }, `execution ${id} to end`);

  it('keeps the run from the agent while it waits, then runs it once when approved', async () => {
    const asked = await markingRule('asked', { approval: { required: true } });
    const plain = await markingRule('plain');
    const waiting = await fire(asked.triggerId);
    // Fired after the waiting one, to the same agent: once it has run, the agent had its chance at both.
    expect((await ended(await fire(plain.triggerId))).state).toBe('succeeded');
    const before = await get(waiting);
    expect(before).toMatchObject({ state: 'awaiting_approval', approval: { role: 'operator', approvedAt: null } });
    expect(before.reason).toMatch(/waits for approval by an operator or above .* nothing runs until then/);
    expect(asked.runs()).toBe(0);

    const approved = await env.api('POST', `/api/v1/executions/${waiting}/approve`, { comment: 'disk is really full' });
    expect(approved.statusCode, approved.body).toBe(202);
    expect(approved.json().state).toMatch(/^(queued|dispatched|running|succeeded)$/);
    const done = await ended(waiting);
    expect(done.state).toBe('succeeded');
    expect(asked.runs()).toBe(1);
    expect(done.transitions!.map((t) => t.to)).toEqual(['awaiting_approval', 'queued', 'dispatched', 'running', 'succeeded']);
    expect(done.transitions![1]!.decidedBy).toMatchObject({ via: 'api', comment: 'disk is really full' });
    expect(done.approval!.approvedAt).not.toBeNull();

    const again = await env.api('POST', `/api/v1/executions/${waiting}/approve`);
    expect(again.statusCode, again.body).toBe(409);
    expect(again.headers['content-type']).toMatch(/application\/problem\+json/);
    expect(again.json().detail).toMatch(/already approved and is succeeded: it runs once; your approval changed nothing/);
    expect(asked.runs()).toBe(1);
    const audit = (await env.api('GET', `/api/v1/audit?action=execution.approve&target=execution:${waiting}`)).json().items;
    expect(audit).toHaveLength(1);
    expect(audit[0].after).toMatchObject({ id: waiting, state: 'queued' });
  });

  it('runs it once when two people approve at the same moment', async () => {
    const asked = await markingRule('twice', { approval: { required: true } });
    const id = await fire(asked.triggerId);
    const replies = await Promise.all([1, 2].map(() => env.api('POST', `/api/v1/executions/${id}/approve`)));
    expect(replies.map((r) => r.statusCode).sort()).toEqual([202, 409]);
    expect((await ended(id)).state).toBe('succeeded');
    expect(asked.runs()).toBe(1);
    expect((await get(id)).transitions!.filter((t) => t.to === 'queued')).toHaveLength(1);
  });

  it('never runs a rejected one, and an approval after the rejection changes nothing and says so', async () => {
    const asked = await markingRule('rejected', { approval: { required: true } });
    const id = await fire(asked.triggerId);
    const rejected = await env.api('POST', `/api/v1/executions/${id}/reject`, { comment: 'not during the sale' });
    expect(rejected.statusCode, rejected.body).toBe(200);
    expect(rejected.json()).toMatchObject({ state: 'rejected', reason: expect.stringMatching(/^rejected by .*\(api\): not during the sale$/) });
    const late = await env.api('POST', `/api/v1/executions/${id}/approve`);
    expect(late.statusCode).toBe(409);
    expect(late.json().detail).toMatch(/was already rejected by .*; your approval changed nothing\. To run the fix, raise its alert again or use Run now/);
    expect((await get(id)).state).toBe('rejected');
    expect(asked.runs()).toBe(0);
    expect((await env.api('GET', `/api/v1/audit?action=execution.reject&target=execution:${id}`)).json().items).toHaveLength(1);
  });

  it('ends one nobody decided in time expired, never run, and refuses a late approval', async () => {
    const asked = await markingRule('expired', { approval: { required: true, timeoutSeconds: 1 } });
    const id = await fire(asked.triggerId);
    const expired = await ended(id);
    expect(expired).toMatchObject({ state: 'expired', reason: expect.stringMatching(/nobody approved or rejected it within .* it never ran/) });
    const late = await env.api('POST', `/api/v1/executions/${id}/approve`);
    expect(late.statusCode).toBe(409);
    expect(late.json().detail).toMatch(/expired before anyone decided/);
    expect(asked.runs()).toBe(0);
  });

  it('a cancelled one stays cancelled', async () => {
    const asked = await markingRule('cancelled', { approval: { required: true } });
    const id = await fire(asked.triggerId);
    expect((await env.api('POST', `/api/v1/executions/${id}/cancel`)).json().state).toBe('cancelled');
    const late = await env.api('POST', `/api/v1/executions/${id}/approve`);
    expect(late.statusCode).toBe(409);
    expect(late.json().detail).toMatch(/was cancelled; your approval changed nothing/);
    expect(asked.runs()).toBe(0);
  });

  it('takes the decision from the role the rule names, and a viewer none', async () => {
    const asked = await markingRule('admins', { approval: { required: true, role: 'admin' } });
    const id = await fire(asked.triggerId);
    const operator = await invite(env, `op-${dialect}@example.com`, 'operator');
    const viewer = await invite(env, `viewer-${dialect}@example.com`, 'viewer');
    const byOperator = await operator.call('POST', `/api/v1/executions/${id}/approve`, {});
    expect(byOperator.statusCode).toBe(403);
    expect(byOperator.json().detail).toMatch(/needs an admin or above to approve it, and your role here is operator/);
    expect((await viewer.call('POST', `/api/v1/executions/${id}/reject`, {})).statusCode).toBe(403);
    expect((await get(id)).state).toBe('awaiting_approval');
    const admin = await invite(env, `admin-${dialect}@example.com`, 'admin');
    expect((await admin.call('POST', `/api/v1/executions/${id}/approve`, { comment: 'go' })).statusCode).toBe(202);
    const done = await ended(id);
    expect(done.transitions!.find((t) => t.to === 'queued')!.decidedBy).toMatchObject({ email: `admin-${dialect}@example.com`, via: 'ui', comment: 'go' });
    expect(asked.runs()).toBe(1);
  });

  it('counts an approved run in the action limit, and refuses the approval that would pass it', async () => {
    const asked = await markingRule('limited', { approval: { required: true }, actionLimit: { max: 1, windowSeconds: 3600 } });
    // Both wait: waiting is not running, so neither counts yet.
    const first = await fire(asked.triggerId);
    const second = await fire(asked.triggerId);
    expect((await get(second)).state).toBe('awaiting_approval');
    expect((await env.api('POST', `/api/v1/executions/${first}/approve`)).statusCode).toBe(202);
    const refused = await env.api('POST', `/api/v1/executions/${second}/approve`);
    expect(refused.statusCode).toBe(409);
    expect(refused.json().detail).toMatch(/action limit is reached on db-1: 1 execution within 3600 s already \(max 1\); nothing was approved and it still waits/);
    expect((await get(second)).state).toBe('awaiting_approval');
    expect((await ended(first)).state).toBe('succeeded');
    expect(asked.runs()).toBe(1);
  });

  it('asks for approval of a cloud terminate unless the rule turns it off, and says which', async () => {
    // Never called: the rule is only created and read.
    const credential = await env.api('POST', '/api/v1/credentials', { name: `aws-${dialect}`, provider: 'aws', secret: { accessKeyId: 'AKIAIOSFODNN7EXAMPLE', secretAccessKey: 'wJalrXUtnFEMI/K7MDENG/bPxRfiCYEXAMPLEKEY' } });
    expect(credential.statusCode, credential.body).toBe(201);
    const cloud = { type: 'cloud', operation: 'terminate', confirmTerminate: true, region: 'eu-west-1', credentialId: credential.json().id };
    const base = { action: cloud, target: { type: 'trigger_host' }, infrastructureType: 'CLOUD_EC2' };
    const asks = await env.api('POST', '/api/v1/rules', { name: `terminate-${dialect}`, trigger: { type: 'webhook' }, ...base });
    expect(asks.statusCode, asks.body).toBe(201);
    expect(asks.json()).toMatchObject({ approval: null, approvalRequired: true });
    const off = await env.api('PATCH', `/api/v1/rules/${asks.json().id}`, { approval: { required: false } });
    expect(off.json()).toMatchObject({ approval: { required: false }, approvalRequired: false });
    expect((await env.api('PATCH', `/api/v1/rules/${asks.json().id}`, { approval: { required: true, role: 'owner' } })).statusCode).toBe(400);
  });
});

// Two service nodes on one PostgreSQL: the decision is taken under the rule's lock, so approvals of
// one execution through both nodes at once run it once; the agent is on node B, approvals through A
// reach it through LISTEN/NOTIFY (the sweeper's hourly pass leaves no other way).
describe.skipIf(!testDialects().includes('postgres'))('approvals across two nodes on one PostgreSQL', () => {
  let a: TestEnv;
  let b: TestEnv;
  let agent: AgentProcess;
  const marks = fs.mkdtempSync(path.join(os.tmpdir(), 'pitcrew-approvals-cluster-'));

  beforeAll(async () => {
    a = await startTestEnv('postgres', { listen: true, sweepIntervalMs: 3_600_000 });
    b = await startTestEnv('postgres', { listen: true, sweepIntervalMs: 3_600_000, database: a.database });
    agent = spawnAgent({ server: b.listening!.httpsUrl, apiKey: b.tenant.apiKey, hostname: 'on-node-b', fingerprint: b.listening!.fingerprint });
    await waitOnline(b.api, 'on-node-b');
  });
  afterAll(async () => {
    await agent.stop();
    await b.close();
    await a.close();
    fs.rmSync(marks, { recursive: true, force: true });
  });

  it('runs each execution once when both nodes approve it at the same moment', async () => {
    const file = path.join(marks, 'runs');
    const rule = await a.createWebhookRule({ approval: { required: true }, action: { type: 'script', flavour: 'autofix', runbook: { script: `echo "$PITCREW_EXECUTION_ID" >> '${file}'` } } });
    const ids: string[] = [];
    for (let i = 0; i < 5; i++) ids.push(((await a.webhook(rule.triggerId, { HostName: 'on-node-b' })).json().executionIds as string[])[0]!);
    for (const id of ids) {
      const replies = await Promise.all([a, b].map((node) => node.api('POST', `/api/v1/executions/${id}/approve`)));
      expect(replies.map((r) => r.statusCode).sort()).toEqual([202, 409]);
    }
    for (const id of ids) {
      await waitFor(async () => (await a.api('GET', `/api/v1/executions/${id}`)).json().state === 'succeeded', `execution ${id} to succeed`);
    }
    const ran = fs.readFileSync(file, 'utf8').split('\n').filter(Boolean).sort();
    expect(ran).toEqual([...ids].sort());
  });

  it("shows on one node's live page the approval given on the other, and the run starting", async () => {
    const gate = path.join(marks, 'live.go');
    const rule = await a.createWebhookRule({ approval: { required: true }, action: { type: 'script', flavour: 'autofix', runbook: { script: `while [ ! -e '${gate}' ]; do sleep 0.05; done; echo done` } } });
    const [id] = (await a.webhook(rule.triggerId, { HostName: 'on-node-b' })).json().executionIds as string[];
    const stream = await fetch(`${a.listening!.httpUrl}/api/v1/executions/${id}/stream`, { headers: { authorization: `Bearer ${a.tenant.token}` } });
    const reader = stream.body!.pipeThrough(new TextDecoderStream()).getReader();
    let text = '';
    const readUntil = async (what: string) => {
      while (!text.includes(what)) {
        const { value, done } = await reader.read();
        if (done) throw new Error(`the stream ended before ${what}; it said: ${text}`);
        text += value;
      }
    };
    await readUntil('data: {"state":"awaiting_approval"}');
    // Node B decides and its agent runs it: node A's page hears of both from the stored state.
    expect((await b.api('POST', `/api/v1/executions/${id}/approve`)).statusCode).toBe(202);
    await readUntil('data: {"state":"running"}');
    expect(text).not.toContain('event: end');
    fs.writeFileSync(gate, '');
    await readUntil('event: end');
    expect(text).toMatch(/event: end\ndata: \{[^\n]*"state":"succeeded"/);
  });
});
