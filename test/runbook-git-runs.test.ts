import { createHash } from 'node:crypto';
import net from 'node:net';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { startTestEnv, scriptRule, type TestEnv } from './support/app.js';
import { spawnAgent, waitOnline, type AgentProcess } from './support/agents.js';
import { testDialects } from './support/databases.js';
import { startGitServers, type GitServers, type TestRepository } from './support/git-server.js';
import { createChannel, waitState } from './support/notify.js';
import { expectProblem } from './support/problems.js';
import { startReceiver, type Receiver } from './support/receivers.js';
import { waitFor } from './support/wait.js';

/*
 * Issue 20, points 2-4, end to end: a rule runs a file of the tenant's git repository (served by
 * git http-backend on loopback), read fresh for each event before dispatch, on a real agent that
 * checks the file's hash; the commit and hash are recorded; a commit pushed between two events runs
 * in the second; a read that fails fails the execution before dispatch, with the reason and an
 * error notification, and nothing runs (docs/runbooks.md#git-repositories).
 */
const sha256 = (text: string) => createHash('sha256').update(text, 'utf8').digest('hex');
const FIX_V1 = '#!/bin/sh\necho "fixing $Service on $(hostname -s 2>/dev/null || echo host): v1"\n';
const FIX_V2 = '#!/bin/sh\necho "fixing $Service: v2"\n';
const HOST = 'git-runs-host';
const GIT_TIMEOUT_SECONDS = 15;

describe.each(testDialects())('rules running runbooks from git on %s', (dialect) => {
  let servers: GitServers;
  let ops: TestRepository;
  let env: TestEnv;
  let agent: AgentProcess;
  let receiver: Receiver;
  let repositoryId: string;
  let firstCommit: string;

  beforeAll(async () => {
    servers = await startGitServers();
    ops = servers.repository('ops');
    firstCommit = ops.commit({ 'runbooks/fix.sh': FIX_V1, 'runbooks/link.sh': { symlink: 'fix.sh' }, 'runbooks/list.sh': '#!/bin/sh\necho buckets\n' });
    // A read (ls-remote, fetch, ls-tree) took up to 4.7 s at load 20 on 2 cores (0.4-4.7 s, 24 reads of
    // test/support/git-server.ts's HTTPS server): 5 s failed runs that should succeed. 15 s: 3 times that,
    // and what the silent server's run below waits before it fails.
    env = await startTestEnv(dialect, { listen: true, git: { caPem: servers.https.caPem, timeoutSeconds: GIT_TIMEOUT_SECONDS } });
    receiver = await startReceiver();
    await createChannel(env, { name: 'errors', type: 'slack', mode: 'errors', config: { webhookUrl: `${receiver.url}/hook` } });
    const made = await env.api('POST', '/api/v1/repositories', { name: 'ops', url: servers.https.url('ops'), ref: 'main', credential: { token: servers.token } });
    expect(made.statusCode, made.body).toBe(201);
    repositoryId = made.json().id;
    const { httpsUrl, fingerprint } = env.listening!;
    agent = spawnAgent({ server: httpsUrl, apiKey: env.tenant.apiKey, hostname: HOST, fingerprint });
    await waitOnline(env.api, HOST);
  }, 60_000);
  afterAll(async () => {
    await agent?.stop();
    await env?.close();
    await servers?.close();
  });

  const gitRule = async (runbook: Record<string, unknown>, action: Record<string, unknown> = {}) => {
    const made = await env.api('POST', '/api/v1/rules', scriptRule({ action: { type: 'script', flavour: 'autofix', runbook: { repositoryId, ...runbook }, ...action }, target: { type: 'specific_host', hostname: HOST } }));
    expect(made.statusCode, made.body).toBe(201);
    return made.json() as { id: string; trigger: { triggerId: string }; action: Record<string, unknown> };
  };
  const fire = async (triggerId: string) => {
    const reply = await env.webhook(triggerId, { Service: 'nginx' });
    expect(reply.statusCode, reply.body).toBe(202);
    return (reply.json().executionIds as string[])[0]!;
  };

  it('reads the file before dispatch, runs it on the agent, and records the commit and hash; a commit pushed between two events runs in the second', async () => {
    const rule = await gitRule({ path: 'runbooks/fix.sh' });
    expect(rule.action).toEqual({ type: 'script', flavour: 'autofix', runbook: { repositoryId, path: 'runbooks/fix.sh' } });
    const first = await waitState(env, await fire(rule.trigger.triggerId), 'succeeded');
    expect(first).toMatchObject({
      script: FIX_V1, stdout: expect.stringMatching(/^fixing nginx on .*: v1\n$/),
      runbook: { repositoryId, repositoryName: 'ops', path: 'runbooks/fix.sh', ref: 'main', commit: firstCommit, sha256: sha256(FIX_V1) },
    });
    const second = ops.commit({ 'runbooks/fix.sh': FIX_V2 });
    const after = await waitState(env, await fire(rule.trigger.triggerId), 'succeeded');
    expect(after).toMatchObject({ script: FIX_V2, stdout: 'fixing nginx: v2\n', runbook: { commit: second, sha256: sha256(FIX_V2) } });
    expect(second).not.toBe(firstCommit);
  });

  it('runs a rule pinned to a commit at that commit after later pushes, and refuses an abbreviated commit id at save', async () => {
    const pinned = ops.commit({ 'runbooks/pinned.sh': '#!/bin/sh\necho "pinned $Service"\n' });
    ops.commit({ 'runbooks/pinned.sh': '#!/bin/sh\necho "moved on"\n' });
    const rule = await gitRule({ path: 'runbooks/pinned.sh', ref: pinned });
    for (let i = 0; i < 2; i += 1) {
      const ran = await waitState(env, await fire(rule.trigger.triggerId), 'succeeded');
      expect(ran).toMatchObject({ stdout: 'pinned nginx\n', runbook: { ref: pinned, commit: pinned } });
    }
    const short = await env.api('POST', '/api/v1/rules', scriptRule({ action: { type: 'script', flavour: 'autofix', runbook: { repositoryId, path: 'runbooks/pinned.sh', ref: pinned.slice(0, 7) } }, target: { type: 'specific_host', hostname: HOST } }));
    expect(expectProblem(short, 400, 'PITCREW_ERR_VALIDATION').errors).toEqual([{ path: '/body/action/runbook/ref', message: expect.stringMatching(/looks like an abbreviated commit id; give the whole id \(git rev-parse [0-9a-f]{7} prints it\) to pin that commit, or tag the commit and give the tag/) }]);
  });

  it("reads once for a fan-out's event: every host runs the same commit's file, and maxConcurrency counts from the read", async () => {
    for (const host of ['fan-1', 'fan-2', 'fan-3']) await env.enrol(`${host}-${dialect}`, [`gitfan-${dialect}`]);
    const made = await env.api('POST', '/api/v1/rules', scriptRule({
      action: { type: 'script', flavour: 'autofix', runbook: { repositoryId, path: 'runbooks/fix.sh' } },
      target: { type: 'specific_tags', tags: [`gitfan-${dialect}`], maxConcurrency: 1 },
    }));
    expect(made.statusCode, made.body).toBe(201);
    const lookups = servers.https.count('ops', 'ls-refs');
    const reply = await env.webhook(made.json().trigger.triggerId, { Service: 'nginx' });
    const ids = reply.json().executionIds as string[];
    expect(ids).toHaveLength(3);
    const read = await waitFor(async () => {
      const views = await Promise.all(ids.map(async (id) => (await env.api('GET', `/api/v1/executions/${id}`)).json()));
      return views.every((view) => view.awaitingRunbook === false) ? views : undefined;
    }, 'the fan-out to be read');
    expect(new Set(read.map((view) => view.runbook.commit)).size).toBe(1);
    expect(read.map((view) => view.held).sort()).toEqual([false, true, true]);
    expect(servers.https.count('ops', 'ls-refs') - lookups).toBe(1);
  });

  it('a read that fails fails the execution before dispatch, says why, tells the errors channel, and runs nothing', async () => {
    const missing = await gitRule({ path: 'runbooks/nope.sh' });
    const failed = await waitState(env, await fire(missing.trigger.triggerId), 'failed');
    expect(failed).toMatchObject({ dispatchedAt: null, startedAt: null, exitCode: null, script: null, runbook: { repositoryId, path: 'runbooks/nope.sh' } });
    expect(failed.reason).toMatch(/^could not read its runbook runbooks\/nope\.sh from its git repository, so nothing ran: .*runbooks\/nope\.sh/);
    expect((failed.transitions as Array<{ from: string; to: string }>).map((t) => `${t.from}>${t.to}`)).toEqual(['null>queued', 'queued>failed']);
    await waitFor(() => receiver.accepted().find((r) => r.raw.includes('nope.sh')), 'the error notification naming the file');

    const symlink = await waitState(env, await fire((await gitRule({ path: 'runbooks/link.sh' })).trigger.triggerId), 'failed');
    expect(symlink.reason).toMatch(/symbolic link|symlink/);
    const badRef = await waitState(env, await fire((await gitRule({ path: 'runbooks/fix.sh', ref: 'release-9' })).trigger.triggerId), 'failed');
    expect(badRef.reason).toMatch(/release-9/);
    expect(JSON.stringify([failed, symlink, badRef])).not.toContain(servers.token);
  });

  it('a run waits, shown as awaiting its runbook, while its server does not answer, then fails when the read times out', async () => {
    // A server that takes the connection and never answers: git waits until its timeout.
    const silent = net.createServer(() => undefined);
    await new Promise<void>((resolve) => silent.listen(0, '127.0.0.1', resolve));
    try {
      const made = await env.api('POST', '/api/v1/repositories', { name: 'silent', url: `https://127.0.0.1:${(silent.address() as net.AddressInfo).port}/ops.git`, ref: 'main' });
      expect(made.statusCode, made.body).toBe(201);
      const rule = await env.api('POST', '/api/v1/rules', scriptRule({ action: { type: 'script', flavour: 'autofix', runbook: { repositoryId: made.json().id, path: 'fix.sh' } }, target: { type: 'specific_host', hostname: HOST } }));
      const id = await fire(rule.json().trigger.triggerId);
      expect((await env.api('GET', `/api/v1/executions/${id}`)).json()).toMatchObject({ state: 'queued', awaitingRunbook: true, held: false, reason: 'waiting for its runbook to be read from its git repository' });
      // The read times out GIT_TIMEOUT_SECONDS after the event; then the run fails in one write.
      const failed = await waitState(env, id, 'failed', GIT_TIMEOUT_SECONDS * 1000 + 20_000);
      expect(failed).toMatchObject({ awaitingRunbook: false, dispatchedAt: null });
      expect(failed.reason).toMatch(/^could not read its runbook fix\.sh from its git repository, so nothing ran: .*silent/);
    } finally {
      silent.close();
    }
  }, GIT_TIMEOUT_SECONDS * 1000 + 30_000);

  it('refuses at save a path that could leave the repository, another tenant\'s repository, and keeps a repository a rule uses', async () => {
    const escape = await env.api('POST', '/api/v1/rules', scriptRule({ action: { type: 'script', flavour: 'autofix', runbook: { repositoryId, path: '../../etc/passwd' } } }));
    expect(expectProblem(escape, 400, 'PITCREW_ERR_VALIDATION').errors).toEqual([{ path: '/body/action/runbook/path', message: expect.stringMatching(/^"\.\.\/\.\.\/etc\/passwd" holds a "\.\." part/) }]);
    const absolute = await env.api('POST', '/api/v1/rules', scriptRule({ action: { type: 'script', flavour: 'autofix', runbook: { repositoryId, path: '/etc/passwd' } } }));
    expect(expectProblem(absolute, 400, 'PITCREW_ERR_VALIDATION').errors![0]!.path).toBe('/body/action/runbook/path');
    const other = await env.addTenant(`git-other-${dialect}`);
    const theirs = await env.api('POST', '/api/v1/rules', scriptRule({ action: { type: 'script', flavour: 'autofix', runbook: { repositoryId, path: 'runbooks/fix.sh' } } }), other.token);
    expect(expectProblem(theirs, 400, 'PITCREW_ERR_VALIDATION').errors).toEqual([{ path: '/body/action/runbook/repositoryId', message: expect.stringMatching(/^no repository .* in this tenant/) }]);

    const kept = expectProblem(await env.api('DELETE', `/api/v1/repositories/${repositoryId}`), 409, 'PITCREW_ERR_CONFLICT');
    expect(kept.detail).toMatch(/rule/);
  });

  it('a CLI action runs a git file on the CLI Machine once it is read', async () => {
    const made = await env.api('POST', '/api/v1/rules', scriptRule({ action: { type: 'cli', runbook: { repositoryId, path: 'runbooks/list.sh' } }, target: { type: 'cli_machine' } }));
    expect(made.statusCode, made.body).toBe(201);
    const done = await waitState(env, await fire(made.json().trigger.triggerId), 'succeeded');
    expect(done).toMatchObject({ actionType: 'cli', stdout: 'buckets\n', runbook: { path: 'runbooks/list.sh', sha256: sha256('#!/bin/sh\necho buckets\n') } });
  });
});
