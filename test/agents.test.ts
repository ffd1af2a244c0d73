import fs from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { WebSocket } from 'ws';
import { afterAll, beforeAll, describe, expect, it, vi } from 'vitest';
import { startTestEnv, type TestEnv } from './support/app.js';
import { spawnAgent, waitOnline, type AgentProcess } from './support/agents.js';
import { testDialects } from './support/databases.js';
import { UNSENT_AFTER_MS } from '../src/executions/sweeper.js';
// The very constants the UI starts a rule and a runbook from (web/src/runbooks/form.ts uses the first).
import { SAMPLE_SCRIPT, SCHEDULE_SAMPLE_SCRIPT } from '../web/src/runbooks/sample-scripts.js';
import { breakStorage } from './support/storage.js';
import { waitFor } from './support/wait.js';

interface Execution {
  id: string;
  hostname: string;
  state: string;
  reason: string | null;
  exitCode: number | null;
  stdout: string;
  stderr: string;
  artifacts?: Array<{ id: string; name: string; size: number }>;
  transitions?: Array<{ from: string | null; to: string }>;
}

const TERMINAL = ['succeeded', 'failed', 'timed_out', 'cancelled', 'lost', 'expired'];

describe.each(testDialects())('agents run scripts end to end on %s', (dialect) => {
  let env: TestEnv;
  const agents: AgentProcess[] = [];
  const toolDir = fs.mkdtempSync(path.join(os.tmpdir(), 'pitcrew-tools-'));

  beforeAll(async () => {
    env = await startTestEnv(dialect, { listen: true });
    const { httpsUrl, fingerprint } = env.listening!;
    const start = (hostname: string, tags: string[], args: string[] = []) => {
      agents.push(spawnAgent({ server: httpsUrl, apiKey: env.tenant.apiKey, hostname, tags, fingerprint, args }));
    };
    start('web-1', ['web', 'eu']);
    start('web-2', ['web', 'us']);
    start('db-1', ['db', 'eu']);
    start('locked-1', ['locked'], ['--allow', 'echo *', '--allow', 'true']);
    // A tool installed outside the default PATH (a JDK's jcmd in /opt), given to scripts with --script-path.
    fs.mkdirSync(path.join(toolDir, 'bin'));
    fs.writeFileSync(path.join(toolDir, 'bin', 'opt-tool'), '#!/bin/sh\necho "opt-tool ran"\n', { mode: 0o755 });
    start('tools-1', ['tools'], ['--script-path', `${toolDir}/bin:/usr/bin:/bin`]);
    for (const hostname of ['web-1', 'web-2', 'db-1', 'locked-1', 'tools-1']) await waitOnline(env.api, hostname);
  });
  afterAll(async () => {
    await Promise.all(agents.map((agent) => agent.stop()));
    await env.close();
    fs.rmSync(toolDir, { recursive: true, force: true });
  });

  async function rule(script: string, target: Record<string, unknown> = { type: 'trigger_host' }, action: Record<string, unknown> = {}) {
    return env.createWebhookRule({ target, action: { type: 'script', flavour: 'autofix', runbook: { script }, ...action } });
  }

  async function fire(triggerId: string, body: Record<string, unknown>): Promise<string[]> {
    const response = await env.webhook(triggerId, body);
    expect(response.statusCode).toBe(202);
    return response.json().executionIds;
  }

  async function execution(id: string): Promise<Execution> {
    return (await env.api('GET', `/api/v1/executions/${id}`)).json();
  }

  function finished(id: string, timeoutMs = 20_000): Promise<Execution> {
    return waitFor(async () => {
      const e = await execution(id);
      return TERMINAL.includes(e.state) ? e : undefined;
    }, `execution ${id} to end`, timeoutMs);
  }

  it('lists the enrolled hosts online with their tags, OS and agent version', async () => {
    const hosts = (await env.api('GET', '/api/v1/hosts')).json().items;
    const web1 = hosts.find((h: { hostname: string }) => h.hostname === 'web-1');
    expect(web1).toMatchObject({ status: 'online', tags: ['eu', 'web'], agentTags: ['eu', 'web'], agentVersion: expect.any(String) });
    expect(web1.os).toMatch(/Linux/);
    expect((await env.api('GET', '/api/v1/hosts?tag=eu')).json().items.map((h: { hostname: string }) => h.hostname).sort()).toEqual(['db-1', 'web-1']);
  });

  it('runs on the trigger host with the payload as environment, never as script text', async () => {
    const { triggerId } = await rule('echo "host=$HostName key=$Key1 sev=$Severity run=$PITCREW_EXECUTION_ID on=$PITCREW_HOSTNAME"; echo "quoted=$Quoted"; echo oops >&2; exit 3');
    const [id] = await fire(triggerId, { HostName: 'WEB-1', Severity: 'critical', MetaData: { Key1: 'v 1', Quoted: '$(echo injected) `id` "; rm -rf /' } });
    const e = await finished(id!);
    expect(e).toMatchObject({ hostname: 'web-1', state: 'failed', exitCode: 3, reason: 'exit code 3' });
    expect(e.stdout).toContain(`host=WEB-1 key=v 1 sev=critical run=${id} on=web-1`);
    expect(e.stdout).toContain('quoted=$(echo injected) `id` "; rm -rf /');
    expect(e.stdout).not.toContain('injected\n');
    expect(e.stderr).toBe('oops\n');
    expect(e.transitions!.map((t) => t.to)).toEqual(['queued', 'dispatched', 'running', 'failed']);
  });

  // Issue 36: the wizard's sample read a bare $AlarmName under set -u, and failed for a webhook without one.
  it("runs the wizard's and the runbook page's sample scripts for an alert with only HostName, or no body at all", async () => {
    for (const script of [SAMPLE_SCRIPT, SCHEDULE_SAMPLE_SCRIPT]) {
      const byHost = await rule(script, { type: 'trigger_host' }, { runbook: { script, interpreter: 'sh' } });
      const onlyHost = await finished((await fire(byHost.triggerId, { HostName: 'web-1' }))[0]!);
      expect(onlyHost, onlyHost.stderr).toMatchObject({ state: 'succeeded', exitCode: 0, stderr: '' });
      const onHost = await rule(script, { type: 'specific_host', hostname: 'web-2' }, { runbook: { script, interpreter: 'sh' } });
      const response = await env.app.server.inject({ method: 'POST', url: `/api/v1/trigger/channel/webhook/${env.tenant.apiKey}/${onHost.triggerId}` });
      expect(response.statusCode, response.body).toBe(202);
      const noBody = await finished(response.json().executionIds[0]);
      expect(noBody, noBody.stderr).toMatchObject({ state: 'succeeded', exitCode: 0, stderr: '' });
      if (script === SAMPLE_SCRIPT) expect([onlyHost.stdout, noBody.stdout]).toEqual(['remediating an alarm (no severity) on web-1\n', 'remediating an alarm (no severity) on this host\n']);
      else expect([onlyHost.stdout, noBody.stdout]).toEqual(['tick of now on web-1\n', 'tick of now on web-2\n']);
    }
  });

  it('runs the fix when an alert field is too long for an environment variable, without that one', async () => {
    const { triggerId } = await rule('echo "small=$Small big=${#Big}"');
    const big = 'x'.repeat(140 * 1024); // over the kernel's 128 KiB per variable: spawn would fail with E2BIG
    const response = await env.webhook(triggerId, { HostName: 'web-1', MetaData: { Big: big, Small: 'ok' } });
    expect(response.statusCode).toBe(202);
    expect(response.json().skippedEnv).toEqual([{ name: 'Big', reason: expect.stringContaining('128 KiB') }]);
    const e = await finished(response.json().executionIds[0]);
    expect(e).toMatchObject({ state: 'succeeded', stdout: 'small=ok big=0\n' });
    const event = (await env.api('GET', `/api/v1/events/${response.json().eventId}`)).json();
    expect(event.payload.MetaData.Big).toBe(big);
  });

  it('dispatches work for an agent connected to this node in the transaction that queues it', async () => {
    const claims = vi.spyOn(env.app.context.ledger, 'claim');
    const { triggerId } = await rule('echo one-commit');
    const [id] = await fire(triggerId, { HostName: 'web-2' });
    expect((await finished(id!)).stdout).toBe('one-commit\n');
    expect(claims).not.toHaveBeenCalled();
    claims.mockRestore();
    const transitions = await env.store.db.selectFrom('execution_transitions').select(['from_state', 'to_state', 'at']).where('execution_id', '=', id!).orderBy('id').execute();
    expect(transitions.map((t) => `${t.from_state}→${t.to_state}`)).toEqual(['null→queued', 'queued→dispatched', 'dispatched→running', 'running→succeeded']);
    expect(transitions[1]!.at).toBe(transitions[0]!.at);
  });

  it('sends work dispatched to an agent session but never sent on it, as a commit whose reply a failover cut leaves it', async () => {
    // The commit of a claim (or of an ingest that dispatched at once) went through, its reply was
    // lost with the connection, so the caller saw an error and sent nothing. A lost reply cannot be
    // had on demand: the row is put in the state it leaves, for web-2's live session.
    const { hostId } = await env.enrol('unsent-1');
    const { triggerId } = await rule('echo "sent at last"', { type: 'specific_host', hostname: 'unsent-1' });
    const [id] = await fire(triggerId, {});
    const web2 = await env.store.db.selectFrom('hosts').select(['id', 'session_id', 'node_id']).where('hostname', '=', 'web-2').executeTakeFirstOrThrow();
    const moved = await env.store.db.updateTable('executions')
      .set({ host_id: web2.id, state: 'dispatched', session_id: web2.session_id, node_id: web2.node_id, dispatched_at: Date.now() - UNSENT_AFTER_MS })
      .where('id', '=', id!).where('host_id', '=', hostId).where('state', '=', 'queued').executeTakeFirst();
    expect(Number(moved.numUpdatedRows)).toBe(1);
    expect(await finished(id!)).toMatchObject({ state: 'succeeded', stdout: 'sent at last\n' });
  });

  it('runs on a specific host, whatever the payload names', async () => {
    const { triggerId } = await rule('echo "I am $PITCREW_HOSTNAME"', { type: 'specific_host', hostname: 'db-1' });
    const [id] = await fire(triggerId, { HostName: 'web-1' });
    expect(await finished(id!)).toMatchObject({ hostname: 'db-1', state: 'succeeded', exitCode: 0, stdout: 'I am db-1\n' });
  });

  it('runs once on every host carrying all the tags', async () => {
    const web = await rule('echo ok', { type: 'specific_tags', tags: ['web'] });
    const ids = await fire(web.triggerId, {});
    const done = await Promise.all(ids.map((id) => finished(id)));
    expect(done.map((e) => e.hostname).sort()).toEqual(['web-1', 'web-2']);
    expect(done.every((e) => e.state === 'succeeded')).toBe(true);

    const webEu = await rule('echo ok', { type: 'specific_tags', tags: ['web', 'eu'] });
    const [only, ...rest] = await fire(webEu.triggerId, {});
    expect(rest).toEqual([]);
    expect((await finished(only!)).hostname).toBe('web-1');
  });

  it('records no_target, with the reason, when no host matches', async () => {
    const { triggerId } = await rule('echo never');
    const response = await env.webhook(triggerId, { HostName: 'mail-9' });
    expect(response.json()).toMatchObject({ outcome: 'no_target', executionIds: [] });
    expect(response.json().reason).toMatch(/no host named "mail-9"/);
  });

  it('kills the whole process group when the timeout passes', async () => {
    const { triggerId } = await rule('sleep 60 & sleep 60; echo never', { type: 'trigger_host' }, { timeoutSeconds: 1 });
    const [id] = await fire(triggerId, { HostName: 'web-2' });
    const e = await finished(id!);
    expect(e.state).toBe('timed_out');
    expect(e.stdout).not.toContain('never');
  });

  it('cancels a running script', async () => {
    const { triggerId } = await rule('echo started; sleep 60; echo never');
    const [id] = await fire(triggerId, { HostName: 'web-1' });
    await waitFor(async () => (await execution(id!)).state === 'running', 'the script to start');
    const cancel = await env.api('POST', `/api/v1/executions/${id}/cancel`);
    expect(cancel.statusCode).toBe(202);
    expect(cancel.json().cancelRequested).toBe(true);
    const e = await finished(id!);
    expect(e.state).toBe('cancelled');
    expect(e.stdout).toContain('started');
    expect(e.stdout).not.toContain('never');
    expect((await env.api('POST', `/api/v1/executions/${id}/cancel`)).statusCode).toBe(409);
  });

  it('streams live output over Server-Sent Events until the end', async () => {
    const { triggerId } = await rule('echo first; sleep 1; echo second');
    const [id] = await fire(triggerId, { HostName: 'web-2' });
    const response = await fetch(`${env.listening!.httpUrl}/api/v1/executions/${id}/stream`, { headers: { authorization: `Bearer ${env.tenant.token}` } });
    expect(response.headers.get('content-type')).toMatch(/^text\/event-stream/);
    const text = await response.text();
    const events = text.split('\n\n').filter(Boolean).map((block) => ({ event: /event: (\w+)/.exec(block)?.[1], data: JSON.parse(/data: (.*)/.exec(block)?.[1] ?? 'null') }));
    const end = events.at(-1)!;
    expect(end.event).toBe('end');
    expect(end.data).toMatchObject({ id, state: 'succeeded', stdout: 'first\nsecond\n' });
    expect(events.some((e) => e.event === 'state' && e.data.state === 'running')).toBe(true);
  });

  it("drops live output a host's connection sends for another host's execution", async () => {
    const { triggerId } = await rule('echo mine; sleep 2');
    const [id] = await fire(triggerId, { HostName: 'web-2' });
    await waitFor(async () => (await execution(id!)).state === 'running', 'the script to start');
    const rogue = await env.enrol('rogue-1');
    const socket = new WebSocket(`${env.listening!.httpUrl.replace(/^http/, 'ws')}/api/v1/agents/connect`, { headers: { authorization: `Bearer ${rogue.token}` } });
    await new Promise((resolve, reject) => socket.once('open', resolve).once('error', reject));
    const welcomed = new Promise((resolve) => socket.once('message', resolve));
    socket.send(JSON.stringify({ type: 'hello', v: 1, hostname: 'rogue-1', tags: [], os: 'Linux', arch: 'x64', version: 'test', running: [], interrupted: [] }));
    await welcomed;
    const response = await fetch(`${env.listening!.httpUrl}/api/v1/executions/${id}/stream`, { headers: { authorization: `Bearer ${env.tenant.token}` } });
    socket.send(JSON.stringify({ type: 'output', executionId: id, stream: 'stdout', chunk: 'forged\n' }));
    const text = await response.text();
    socket.close();
    expect(text).toContain('mine');
    expect(text).not.toContain('forged');
  });

  it('collects the files a diagnostics run writes', async () => {
    const { triggerId } = await rule('df -h > "$PITCREW_ARTIFACTS/disk.txt"; printf report > "$PITCREW_ARTIFACTS/report.txt"', { type: 'trigger_host' }, { flavour: 'diagnostics' });
    const [id] = await fire(triggerId, { HostName: 'db-1' });
    const e = await finished(id!);
    expect(e.state).toBe('succeeded');
    expect(e.artifacts!.map((a) => a.name).sort()).toEqual(['disk.txt', 'report.txt']);
    const report = e.artifacts!.find((a) => a.name === 'report.txt')!;
    const download = await env.api('GET', `/api/v1/executions/${id}/artifacts/${report.id}`);
    expect(download.statusCode).toBe(200);
    expect(download.body).toBe('report');
  });

  it('gives scripts the PATH of --script-path, where a tool outside the default one is found', async () => {
    const { triggerId } = await rule('echo "$PATH"; opt-tool');
    const e = await finished((await fire(triggerId, { HostName: 'tools-1' }))[0]!);
    expect(e).toMatchObject({ state: 'succeeded', stdout: `${toolDir}/bin:/usr/bin:/bin\nopt-tool ran\n` });
  });

  it('refuses, with a clear result, a script whose commands are outside the agent allowlist', async () => {
    const { triggerId } = await rule('echo fine; rm -rf /tmp/pitcrew-never');
    const [id] = await fire(triggerId, { HostName: 'locked-1' });
    const e = await finished(id!);
    expect(e.state).toBe('failed');
    expect(e.reason).toMatch(/refused by the agent.*rm -rf \/tmp\/pitcrew-never/);
    expect(e.stdout).toBe('');
    const allowed = await rule('echo fine');
    expect((await finished((await fire(allowed.triggerId, { HostName: 'locked-1' }))[0]!)).state).toBe('succeeded');
  });

  it('records every one of 500 triggers across 5 agents exactly once', async () => {
    const extra = spawnAgent({ server: env.listening!.httpsUrl, apiKey: env.tenant.apiKey, hostname: 'web-3', tags: ['fleet'], fingerprint: env.listening!.fingerprint });
    agents.push(extra);
    await waitOnline(env.api, 'web-3');
    const hosts = ['web-1', 'web-2', 'db-1', 'locked-1', 'web-3'];
    const { triggerId } = await rule('echo "$Seq"');
    const replies = await Promise.all(Array.from({ length: 500 }, (_, i) => env.webhook(triggerId, { HostName: hosts[i % 5], MetaData: { Seq: i } })));
    const ids = replies.flatMap((r) => r.json().executionIds as string[]);
    expect(ids).toHaveLength(500);
    expect(new Set(ids).size).toBe(500);
    const done = await waitFor(async () => {
      const rows = await env.store.db.selectFrom('executions').select(['id', 'state', 'hostname', 'stdout', 'reason', 'stderr']).where('id', 'in', ids).execute();
      return rows.every((r) => TERMINAL.includes(r.state)) ? rows : undefined;
    }, '500 executions to end', 60_000);
    expect(done.filter((r) => r.state !== 'succeeded').slice(0, 3)).toEqual([]);
    expect(done.map((r) => Number(r.stdout)).sort((a, b) => a - b)).toEqual(Array.from({ length: 500 }, (_, i) => i));
    for (const host of hosts) expect(done.filter((r) => r.hostname === host)).toHaveLength(100);
    const transitions = await env.store.db.selectFrom('execution_transitions').select(['execution_id']).where('execution_id', 'in', ids).where('to_state', '=', 'running').execute();
    expect(transitions).toHaveLength(500);
    // Its own wait allows 60 s for the 500 runs; vitest's default 30 s cut it short at load 25.
  }, 90_000);
});

describe.each(testDialects())('a result the database could not take for a moment, on %s', (dialect) => {
  let env: TestEnv;
  let agent: AgentProcess;

  beforeAll(async () => {
    env = await startTestEnv(dialect, { listen: true, sqliteBusyTimeoutMs: 200 });
    agent = spawnAgent({ server: env.listening!.httpsUrl, apiKey: env.tenant.apiKey, hostname: 'blip-1', fingerprint: env.listening!.fingerprint });
    await waitOnline(env.api, 'blip-1');
  });
  afterAll(async () => {
    await agent.stop();
    await env.close();
  });

  const execution = async (id: string): Promise<Execution> => (await env.api('GET', `/api/v1/executions/${id}`)).json();

  it('is offered again as soon as the database is back, not at the next reconnect', async () => {
    const marker = path.join(env.database.dataDir, 'blip-1.go');
    const rule = await env.createWebhookRule({
      target: { type: 'specific_host', hostname: 'blip-1' },
      action: { type: 'script', flavour: 'autofix', runbook: { script: `while [ ! -e ${marker} ]; do sleep 0.05; done; echo done` } },
    });
    const [id] = (await env.webhook(rule.triggerId, {})).json().executionIds as string[];
    await waitFor(async () => (await execution(id!)).state === 'running', 'the script to start');

    const mend = await breakStorage(env, 'executions');
    try {
      fs.writeFileSync(marker, '');
      await waitFor(() => env.logs.some((line) => line.includes('could not record an agent message')), 'the result to meet the failing database');
    } finally {
      await mend();
    }
    const done = await waitFor(async () => {
      const e = await execution(id!);
      return e.state === 'succeeded' ? e : undefined;
    }, 'the result, offered again, to be recorded');
    expect(done.stdout).toBe('done\n');
    expect(agent.child.exitCode).toBeNull();
  });
});

