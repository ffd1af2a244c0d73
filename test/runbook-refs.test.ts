import { createHash } from 'node:crypto';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { runExecutions } from '../src/cli/executions.js';
import { startTestEnv, scriptRule, type TestEnv } from './support/app.js';
import { connectRawAgent } from './support/agents.js';
import { testDialects } from './support/databases.js';
import { expectProblem } from './support/problems.js';

/*
 * Issue 20, point 1: a rule runs a stored runbook, following its latest version or pinned to one;
 * each execution records which version ran (id, version, name, SHA-256) and carries its script,
 * and the agent is sent the hash it checks (agent/executor.ts). A runbook a rule uses cannot be
 * deleted (docs/runbooks.md).
 */
const V1 = '#!/bin/sh\necho "restarting $Service"\n';
const V2 = '#!/bin/sh\nset -eu\necho "restarting $Service, again"\n';
const sha256 = (text: string) => createHash('sha256').update(text, 'utf8').digest('hex');

describe.each(testDialects())('rules running stored runbooks on %s', (dialect) => {
  let env: TestEnv;

  beforeAll(async () => {
    env = await startTestEnv(dialect, { listen: true });
    await env.enrol('web-1');
  });
  afterAll(() => env.close());

  const saveRunbook = async (name: string, script: string, id?: string) => {
    const reply = await env.api(id ? 'PUT' : 'POST', id ? `/api/v1/runbooks/${id}` : '/api/v1/runbooks', { name, script, interpreter: 'sh', description: 'restart it' });
    expect(reply.statusCode, reply.body).toBe(id ? 200 : 201);
    return reply.json() as { id: string; version: number };
  };
  const ruleWith = async (runbook: Record<string, unknown>) => {
    const rule = await env.createWebhookRule({ action: { type: 'script', flavour: 'autofix', runbook } });
    return rule;
  };
  const fire = async (triggerId: string) => {
    const reply = await env.webhook(triggerId, { HostName: 'web-1', Service: 'nginx' });
    expect(reply.statusCode, reply.body).toBe(202);
    const [executionId] = reply.json().executionIds as string[];
    return (await env.api('GET', `/api/v1/executions/${executionId!}`)).json();
  };

  it('follows the latest version: the rule and each execution show the version that ran, with its script and hash', async () => {
    const runbook = await saveRunbook('restart service', V1);
    const rule = await ruleWith({ runbookId: runbook.id });
    expect(rule.body.action).toEqual({ type: 'script', flavour: 'autofix', runbook: { runbookId: runbook.id, name: 'restart service', resolvedVersion: 1, interpreter: 'sh', sha256: sha256(V1) } });

    const first = await fire(rule.triggerId);
    expect(first).toMatchObject({ script: V1, interpreter: 'sh', runbook: { runbookId: runbook.id, version: 1, name: 'restart service', sha256: sha256(V1) } });

    await saveRunbook('restart a service', V2, runbook.id);
    const view = (await env.api('GET', `/api/v1/rules/${rule.id}`)).json();
    expect(view.action.runbook).toEqual({ runbookId: runbook.id, name: 'restart a service', resolvedVersion: 2, interpreter: 'sh', sha256: sha256(V2) });
    const second = await fire(rule.triggerId);
    expect(second).toMatchObject({ script: V2, runbook: { runbookId: runbook.id, version: 2, name: 'restart a service', sha256: sha256(V2) } });
    const printed: string[] = [];
    expect(await runExecutions(['show', second.id], { server: env.listening!.httpUrl, token: env.tenant.token }, (line) => printed.push(line))).toBe(0);
    expect(printed.join('\n')).toContain(`runbook: "restart a service" version 2 (${runbook.id}), sha256 ${sha256(V2)}`);
    // The first execution keeps what it was queued with.
    expect((await env.api('GET', `/api/v1/executions/${first.id}`)).json()).toMatchObject({ script: V1, runbook: { version: 1 } });
  });

  it('stays on a pinned version when the runbook is saved again, taking only its new name', async () => {
    const runbook = await saveRunbook('rotate logs', V1);
    await saveRunbook('rotate logs', V2, runbook.id);
    const rule = await ruleWith({ runbookId: runbook.id, version: 1 });
    await saveRunbook('rotate the logs', `${V2}echo v3\n`, runbook.id);
    const view = (await env.api('GET', `/api/v1/rules/${rule.id}`)).json();
    expect(view.action.runbook).toEqual({ runbookId: runbook.id, version: 1, name: 'rotate the logs', resolvedVersion: 1, interpreter: 'sh', sha256: sha256(V1) });
    expect(await fire(rule.triggerId)).toMatchObject({ script: V1, runbook: { version: 1, sha256: sha256(V1) } });

    // Pinned to another version later, by a change of the rule.
    const moved = await env.api('PATCH', `/api/v1/rules/${rule.id}`, { action: { ...view.action, runbook: { runbookId: runbook.id, version: 3 } } });
    expect(moved.statusCode, moved.body).toBe(200);
    expect(await fire(rule.triggerId)).toMatchObject({ runbook: { version: 3 }, script: `${V2}echo v3\n` });
  });

  it('takes a rule read back as it was sent: the read-only fields are ignored, a change of another field keeps the runbook', async () => {
    const runbook = await saveRunbook('clear cache', V1);
    const rule = await ruleWith({ runbookId: runbook.id });
    const view = (await env.api('GET', `/api/v1/rules/${rule.id}`)).json();
    const again = await env.api('PATCH', `/api/v1/rules/${rule.id}`, { action: view.action, enabled: false });
    expect(again.statusCode, again.body).toBe(200);
    expect(again.json().action).toEqual(view.action);
    const renamed = await env.api('PATCH', `/api/v1/rules/${rule.id}`, { name: 'clear the cache' });
    expect(renamed.json().action.runbook).toEqual(view.action.runbook);
  });

  it('sends the agent the hash it checks before running the script', async () => {
    const enrolled = await env.enrol('db-1');
    const agent = await connectRawAgent(env.listening!.httpsUrl, enrolled.token, 'db-1');
    try {
      await agent.hello();
      const runbook = await saveRunbook('vacuum', V2);
      const stored = await env.createWebhookRule({ action: { type: 'script', flavour: 'autofix', runbook: { runbookId: runbook.id } }, target: { type: 'specific_host', hostname: 'db-1' } });
      const inline = await env.createWebhookRule({ action: { type: 'script', flavour: 'diagnostics', runbook: { script: V1 } }, target: { type: 'specific_host', hostname: 'db-1' } });
      expect(inline.body.action).toMatchObject({ runbook: { script: V1, sha256: sha256(V1) } });
      await env.webhook(stored.triggerId, {});
      expect(await agent.next('execute')).toMatchObject({ script: V2, sha256: sha256(V2) });
      await env.webhook(inline.triggerId, {});
      const second = await agent.next('execute');
      expect(second).toMatchObject({ script: V1, sha256: sha256(V1) });
      expect((await env.api('GET', `/api/v1/executions/${second.executionId}`)).json().runbook).toEqual({ sha256: sha256(V1) });
    } finally {
      await agent.close();
    }
  });

  it('refuses a runbook that is not there, a version it does not have, and forms mixed up, each at its field', async () => {
    const runbook = await saveRunbook('check disk', V1);
    const other = await env.addTenant(`other-${dialect}`);
    const theirs = (await env.api('POST', '/api/v1/runbooks', { name: 'theirs', script: V1 }, other.token)).json();
    const refused = async (runbook: Record<string, unknown>, path: string, message: RegExp) => {
      const reply = await env.api('POST', '/api/v1/rules', scriptRule({ action: { type: 'script', flavour: 'autofix', runbook } }));
      const problem = expectProblem(reply, 400, 'PITCREW_ERR_VALIDATION');
      expect(problem.errors).toEqual([{ path, message: expect.stringMatching(message) }]);
    };
    await refused({ runbookId: '0192f0c8-0000-7000-8000-000000000000' }, '/body/action/runbook/runbookId', /^no runbook 0192f0c8-.* in this tenant; save one with POST \/api\/v1\/runbooks/);
    await refused({ runbookId: theirs.id }, '/body/action/runbook/runbookId', /^no runbook .* in this tenant/);
    await refused({ runbookId: runbook.id, version: 4 }, '/body/action/runbook/version', /^no version 4; the latest is 1$/);
    await refused({ runbookId: runbook.id, script: 'true' }, '/body/action/runbook/runbookId', /^a runbook is a script written here or a stored runbook.*not both/);
    await refused({ runbookId: runbook.id, path: 'a.sh' }, '/body/action/runbook/path', /^path does not go with runbookId/);
    await refused({ script: 'true', version: 2 }, '/body/action/runbook/version', /^version does not go with script/);
    await refused({ notes: 'just notes' }, '/body/action/runbook', /^give the script to run \(script\), a stored runbook/);
    await refused({ repositoryId: '0192f0c8-0000-7000-8000-000000000000' }, '/body/action/runbook/path', /^is needed: the path of the runbook's file in the repository/);
    expect(await env.store.db.selectFrom('rules').select('id').where('runbook_id', '=', theirs.id).execute()).toEqual([]);
  });

  it('keeps a runbook a rule uses from being deleted, naming the rule; once the rule is gone it can be', async () => {
    const runbook = await saveRunbook('flush dns', V1);
    const rule = await ruleWith({ runbookId: runbook.id });
    const refused = expectProblem(await env.api('DELETE', `/api/v1/runbooks/${runbook.id}`), 409, 'PITCREW_ERR_CONFLICT');
    expect(refused.detail).toBe(`runbook "flush dns" is used by rule "${rule.body.name as string}"; change it to another runbook, or delete it, first`);
    expect((await env.api('DELETE', `/api/v1/rules/${rule.id}`)).statusCode).toBe(204);
    expect((await env.api('DELETE', `/api/v1/runbooks/${runbook.id}`)).statusCode).toBe(204);
  });

  it('a CLI action runs a stored runbook too, recorded on its execution', async () => {
    const runbook = await saveRunbook('list buckets', '#!/bin/sh\necho buckets\n');
    const rule = await env.createWebhookRule({ action: { type: 'cli', runbook: { runbookId: runbook.id } }, target: { type: 'cli_machine' } });
    const reply = await env.webhook(rule.triggerId, {});
    const [executionId] = reply.json().executionIds as string[];
    const execution = await env.api('GET', `/api/v1/executions/${executionId!}`);
    expect(execution.json()).toMatchObject({ actionType: 'cli', script: '#!/bin/sh\necho buckets\n', runbook: { runbookId: runbook.id, version: 1, name: 'list buckets' } });
  });

  it('an email runbook mails a stored runbook: its description as the notes, with its script, recorded on the execution', async () => {
    const runbook = await saveRunbook('disk full by hand', V1);
    const rule = await env.createWebhookRule({ action: { type: 'email_runbook', runbook: { runbookId: runbook.id }, recipients: ['oncall@example.com'] } });
    expect(rule.body.action).toEqual({ type: 'email_runbook', runbook: { runbookId: runbook.id, name: 'disk full by hand', resolvedVersion: 1, sha256: sha256(V1) }, recipients: ['oncall@example.com'] });
    const spec = async () => {
      const reply = await env.webhook(rule.triggerId, { HostName: 'web-1' });
      const [id] = reply.json().executionIds as string[];
      return JSON.parse((await env.store.db.selectFrom('executions').select('spec').where('id', '=', id!).executeTakeFirstOrThrow()).spec);
    };
    expect(await spec()).toMatchObject({ kind: 'email_runbook', notes: 'restart it', script: V1, runbook: { runbookId: runbook.id, version: 1, sha256: sha256(V1) } });
    await saveRunbook('disk full by hand', V2, runbook.id);
    expect(await spec()).toMatchObject({ script: V2, runbook: { version: 2 } });

    const mixed = await env.api('POST', '/api/v1/rules', scriptRule({ action: { type: 'email_runbook', runbook: { runbookId: runbook.id, notes: 'mine' } } }));
    expect(expectProblem(mixed, 400, 'PITCREW_ERR_VALIDATION').errors).toEqual([{ path: '/body/action/runbook/notes', message: 'notes does not go with runbookId: a stored runbook mails its own description and script' }]);
    const none = await env.api('POST', '/api/v1/rules', scriptRule({ action: { type: 'email_runbook', runbook: {} } }));
    expect(expectProblem(none, 400, 'PITCREW_ERR_VALIDATION').errors).toEqual([{ path: '/body/action/runbook/notes', message: expect.stringMatching(/^give the steps to mail/) }]);
  });
});
