import fs from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { spawnAgent, waitOnline, type AgentProcess } from './support/agents.js';
import { newId } from '../src/store/ids.js';
import { startTestEnv, type TestEnv } from './support/app.js';
import { testDialects } from './support/databases.js';
import { attemptsOf, createChannel } from './support/notify.js';
import { invite } from './support/people.js';
import { slackShape } from './support/platforms.js';
import { startReceiver, type Receiver } from './support/receivers.js';
import { startSlackEmulator, type SignedClick, type SlackEmulator } from './support/slack-emulator.js';
import { waitFor } from './support/wait.js';

const TERMINAL = ['succeeded', 'failed', 'timed_out', 'cancelled', 'lost', 'expired', 'rejected'];
type Block = Record<string, unknown>;

// Issue 42 (docs/approvals.md "In Slack", docs/notifications.md "Slack app"): a Slack channel with
// an app posts approval requests with Approve and Reject buttons (chat.postMessage), decides a
// signed click as the pitcrew member with the clicker's e-mail, exactly once, and updates the
// message with the outcome (chat.update) however it was decided. Slack is the emulator in
// support/slack-emulator.ts (its Web API checking the bot token, its signed interactive payloads);
// the agent that runs the approved fix is real.
describe.each(testDialects())('approvals from Slack on %s', (dialect) => {
  let env: TestEnv;
  let agent: AgentProcess;
  let slack: SlackEmulator;
  let webhook: Receiver;
  let channelId: string;
  const marks = fs.mkdtempSync(path.join(os.tmpdir(), 'pitcrew-slack-'));
  const ops = `ops-${dialect}@example.com`;

  beforeAll(async () => {
    slack = await startSlackEmulator();
    webhook = await startReceiver(slackShape);
    env = await startTestEnv(dialect, { listen: true, publicUrl: 'https://pitcrew.example.com', sweepIntervalMs: 100, notify: { groupWaitSeconds: 0, slackApiUrl: slack.apiUrl } });
    const { httpsUrl, fingerprint } = env.listening!;
    agent = spawnAgent({ server: httpsUrl, apiKey: env.tenant.apiKey, hostname: 'db-1', tags: ['db'], fingerprint });
    await waitOnline(env.api, 'db-1');
    const channel = await createChannel(env, {
      name: 'approvals', type: 'slack', mode: 'errors',
      config: { webhookUrl: webhook.url, botToken: slack.botToken, signingSecret: slack.signingSecret, channelId: slack.channelId },
    });
    channelId = channel.id;
    await invite(env, ops, 'operator');
    await invite(env, `admin-${dialect}@example.com`, 'admin');
    await invite(env, `viewer-${dialect}@example.com`, 'viewer');
    slack.addUser('U0OPS', ops.toUpperCase());
    slack.addUser('U0ADMIN', `admin-${dialect}@example.com`);
    slack.addUser('U0VIEWER', `viewer-${dialect}@example.com`);
    slack.addUser('U0STRANGER', 'stranger@example.com');
    slack.addUser('U0NOMAIL', null);
  });
  afterAll(async () => {
    await agent.stop();
    await env.close();
    fs.rmSync(marks, { recursive: true, force: true });
  });

  async function waitingRun(name: string, approval: Record<string, unknown> = {}) {
    const file = path.join(marks, name);
    const rule = await env.createWebhookRule({ name, approval: { required: true, ...approval }, action: { type: 'script', flavour: 'autofix', runbook: { script: `echo ran >> '${file}'` } } });
    const reply = await env.webhook(rule.triggerId, { HostName: 'db-1', AlarmName: 'disk_full' });
    expect(reply.statusCode, reply.body).toBe(202);
    const id = (reply.json().executionIds as string[])[0]!;
    const message = await waitFor(() => slack.messages.find((m) => decisionsOf(m).some((b) => b.value === id)), `the request for ${name} in Slack`);
    return { id, message, runs: () => (fs.existsSync(file) ? fs.readFileSync(file, 'utf8').split('\n').filter(Boolean).length : 0) };
  }
  const buttonsOf = (m: { blocks: Block[] }) => m.blocks.flatMap((b) => (b.type === 'actions' ? (b.elements as Block[]) : []));
  const decisionsOf = (m: { blocks: Block[] }) => buttonsOf(m).filter((b) => b.action_id === 'pitcrew_approve' || b.action_id === 'pitcrew_reject');
  const post = (click: SignedClick) => env.app.server.inject({ method: 'POST', url: '/api/v1/chat/slack/interactions', headers: click.headers, payload: click.body });
  const get = async (id: string) => (await env.api('GET', `/api/v1/executions/${id}`)).json() as { state: string; transitions: Array<{ to: string; decidedBy?: Record<string, unknown> }> };
  const ended = (id: string) => waitFor(async () => {
    const e = await get(id);
    return TERMINAL.includes(e.state) ? e : undefined;
  }, `execution ${id} to end`);
  const toldTo = (click: SignedClick) => waitFor(() => slack.ephemerals.find((e) => click.responseUrl.endsWith(e.responseUrl)), 'the answer to the clicker');
  const textOf = (m: { text: string; blocks: Block[] }) => `${m.text}\n${JSON.stringify(m.blocks)}`;

  it('posts the request through the app with buttons; approving from Slack runs it once on the real agent and shows who approved', async () => {
    const { id, message, runs } = await waitingRun('purge cache');
    expect(message.channel).toBe(slack.channelId);
    expect(message.text).toBe('⏸️ Approval needed: purge cache on db-1');
    const [approve, reject] = decisionsOf(message).filter((b) => b.value === id);
    expect(approve).toMatchObject({ action_id: 'pitcrew_approve', style: 'primary', confirm: { title: { text: 'Run it?' } } });
    expect(reject).toMatchObject({ action_id: 'pitcrew_reject', style: 'danger' });
    // The app carried it: the incoming webhook did not post it a second time.
    expect(webhook.accepted().filter((r) => r.raw.includes('purge cache'))).toEqual([]);
    // Where it landed is kept once the delivery settles (after Slack's answer).
    await waitFor(async () => {
      const refs = await env.store.db.selectFrom('notify_deliveries').select('message_ref').where('channel_id', '=', channelId).where('message_ref', 'is not', null).execute();
      return refs.some((r) => r.message_ref === JSON.stringify({ channel: slack.channelId, ts: message.ts }));
    }, "the message's place kept");

    const click = slack.click(message, 'U0OPS', 'pitcrew_approve', id);
    const reply = await post(click);
    expect(reply.statusCode, reply.body).toBe(200);
    const done = await ended(id);
    expect(done.state).toBe('succeeded');
    expect(runs()).toBe(1);
    expect(done.transitions.find((t) => t.to === 'queued')!.decidedBy).toMatchObject({ email: ops, via: 'slack' });
    const audit = (await env.api('GET', `/api/v1/audit?action=execution.approve&target=execution:${id}`)).json().items;
    expect(audit).toHaveLength(1);
    expect(audit[0]).toMatchObject({ actor: { type: 'user', email: ops }, via: 'slack', after: { id, state: 'queued' } });

    // The clicker sees the message replaced at once, then the app's own update lands (chat.update).
    const replaced = await waitFor(() => message.versions.find((v) => v.via === 'response_url'), 'the message replaced through the response_url');
    expect(textOf(replaced)).toContain(`approved by ${ops} (slack)`);
    expect(decisionsOf(replaced).some((b) => b.value === id)).toBe(false);
    const updated = await waitFor(() => message.versions.find((v) => v.via === 'chat.update'), 'the message updated by chat.update');
    expect(updated.text).toBe(`✅ purge cache on db-1: approved by ${ops} (slack)`);
    expect(slack.calls.filter((c) => c.method === 'users.info')[0]).toMatchObject({ authorization: `Bearer ${slack.botToken}` });

    // A second click on a stale message changes nothing and says why.
    const late = slack.click(message, 'U0ADMIN', 'pitcrew_reject', id);
    expect((await post(late)).statusCode).toBe(200);
    expect((await toldTo(late)).text).toMatch(/Nothing was rejected: execution .* was already approved and is succeeded: it runs once/);
    expect(runs()).toBe(1);
  });

  it('runs it once when two people click Approve at once', async () => {
    const { id, message, runs } = await waitingRun('rotate keys');
    const clicks = [slack.click(message, 'U0OPS', 'pitcrew_approve', id), slack.click(message, 'U0ADMIN', 'pitcrew_approve', id)];
    const replies = await Promise.all(clicks.map(post));
    expect(replies.map((r) => r.statusCode)).toEqual([200, 200]);
    expect((await ended(id)).state).toBe('succeeded');
    const refused = await waitFor(() => slack.ephemerals.find((e) => clicks.some((c) => c.responseUrl.endsWith(e.responseUrl))), 'the loser told');
    expect(refused.text).toMatch(/Nothing was approved: .* was already approved .* it runs once/);
    await env.app.context.notifier.pass();
    expect(runs()).toBe(1);
    expect((await get(id)).transitions.filter((t) => t.to === 'queued')).toHaveLength(1);
  });

  it('keeps a click from its 200 until it is decided, and decides one whose node stopped before deciding it', async () => {
    const kept = (executionId: string) => env.store.db.selectFrom('slack_clicks').selectAll().where('execution_id', '=', executionId).execute();
    const first = await waitingRun('drain workers');
    const release = slack.holdUsersInfo();
    const click = slack.click(first.message, 'U0OPS', 'pitcrew_approve', first.id);
    expect((await post(click)).statusCode).toBe(200);
    // Answered and not decided yet (users.info has not answered): the click is stored, without the app's secrets.
    const stored = await kept(first.id);
    expect(stored).toHaveLength(1);
    expect(stored[0]).toMatchObject({ verdict: 'approve', slack_user_id: 'U0OPS', channel_id: channelId });
    expect(JSON.stringify(stored)).not.toContain(slack.botToken);
    expect(JSON.stringify(stored)).not.toContain(slack.signingSecret);
    release();
    expect((await ended(first.id)).state).toBe('succeeded');
    await waitFor(async () => (await kept(first.id)).length === 0, 'the click forgotten once decided');
    expect(first.runs()).toBe(1);

    // A node that answered 200 and stopped before deciding leaves the click claimed; once its claim lapses, this node's sweep decides it.
    const second = await waitingRun('vacuum db');
    const orphan = slack.click(second.message, 'U0OPS', 'pitcrew_approve', second.id);
    const now = Date.now();
    await env.store.db.insertInto('slack_clicks').values({
      id: newId(now - 70_000), tenant_id: env.tenant.tenantId, channel_id: channelId, execution_id: second.id, verdict: 'approve',
      slack_user_id: 'U0OPS', response_url: orphan.responseUrl, ip: '192.0.2.7', received_at: now - 70_000, claimed_until: now - 10_000,
    }).execute();
    const done = await ended(second.id);
    expect(done.state).toBe('succeeded');
    expect(second.runs()).toBe(1);
    expect(done.transitions.find((t) => t.to === 'queued')!.decidedBy).toMatchObject({ email: ops, via: 'slack' });
    await waitFor(async () => (await kept(second.id)).length === 0, 'the lapsed click forgotten once decided');
    expect(env.logs.some((line) => line.includes('deciding a Slack click its node did not') && line.includes(second.id))).toBe(true);
  });

  it('refuses a wrong signature, an altered body and an old timestamp with 401, changing nothing', async () => {
    const { id, message, runs } = await waitingRun('drop table');
    const callsBefore = slack.calls.length;
    const forged = slack.click(message, 'U0OPS', 'pitcrew_approve', id, { signingSecret: 'f'.repeat(32) });
    const altered = slack.click(message, 'U0OPS', 'pitcrew_reject', id);
    const old = slack.click(message, 'U0OPS', 'pitcrew_approve', id, { timestamp: Math.floor(Date.now() / 1000) - 6 * 60 });
    for (const [click, detail] of [
      [forged, /X-Slack-Signature does not verify/],
      [{ ...altered, body: altered.body.replace('pitcrew_reject', 'pitcrew_approve') }, /X-Slack-Signature does not verify/],
      [old, /X-Slack-Request-Timestamp is 3\d\d s from this server's clock/],
    ] as const) {
      const reply = await post(click);
      expect(reply.statusCode, reply.body).toBe(401);
      expect(reply.headers['content-type']).toMatch(/application\/problem\+json/);
      expect(reply.json().detail).toMatch(detail);
      expect(reply.json().detail).toMatch(/Nothing was decided/);
    }
    // A link button's click is signed too (Slack posts it to the app): verified, answered, ignored.
    const link = slack.click(message, 'U0OPS', 'pitcrew_open_rule', id);
    expect((await post(link)).statusCode).toBe(200);
    expect((await post({ ...link, headers: { ...link.headers, 'x-slack-signature': forged.headers['x-slack-signature']! } })).statusCode).toBe(401);
    const unsigned = await env.app.server.inject({ method: 'POST', url: '/api/v1/chat/slack/interactions', headers: { 'content-type': 'application/x-www-form-urlencoded', 'x-slack-request-timestamp': String(Math.floor(Date.now() / 1000)) }, payload: forged.body });
    expect(unsigned.statusCode).toBe(401);
    await env.app.context.notifier.pass();
    expect((await get(id)).state).toBe('awaiting_approval');
    expect(runs()).toBe(0);
    // Nothing unsigned reached Slack's API (no users.info) nor the clicker.
    expect(slack.calls.slice(callsBefore).filter((c) => c.method === 'users.info')).toEqual([]);
    expect(slack.ephemerals.filter((e) => [forged, altered, old, link].some((c) => c.responseUrl.endsWith(e.responseUrl)))).toEqual([]);
  });

  it("tells an unknown user, one without an e-mail and one without the role why nothing happened", async () => {
    const { id, message, runs } = await waitingRun('reboot primary', { role: 'admin' });
    const cases = [
      ['U0STRANGER', /No pitcrew member of this tenant has your Slack e-mail \(stranger@example.com\): nothing was approved/],
      ['U0NOMAIL', /Your Slack profile shows pitcrew no e-mail \(the app needs the users:read.email scope\)/],
      ['U0GONE', /could not read your Slack profile \(Slack refused users.info: user_not_found/],
      ['U0VIEWER', /needs an admin or above to approve it, and your role here is viewer/],
      ['U0OPS', /needs an admin or above to approve it, and your role here is operator/],
    ] as const;
    for (const [user, why] of cases) {
      const click = slack.click(message, user, 'pitcrew_approve', id);
      expect((await post(click)).statusCode).toBe(200);
      expect((await toldTo(click)).text).toMatch(why);
    }
    await env.app.context.notifier.pass();
    expect((await get(id)).state).toBe('awaiting_approval');
    expect(runs()).toBe(0);
    expect(message.versions).toEqual([]);
  });

  it('updates the message when the run is rejected elsewhere and when it expires, and a click after says so', async () => {
    const rejected = await waitingRun('resize disk');
    const reply = await env.api('POST', `/api/v1/executions/${rejected.id}/reject`, { comment: 'not during the sale' });
    expect(reply.statusCode, reply.body).toBe(200);
    const update = await waitFor(() => rejected.message.versions.find((v) => v.via === 'chat.update'), 'the rejection in the message');
    expect(update.text).toMatch(/^❌ resize disk on db-1: rejected by .* \(api\): not during the sale$/);
    expect(decisionsOf(update).some((b) => b.value === rejected.id)).toBe(false);

    const expiring = await waitingRun('flush queue', { timeoutSeconds: 2 });
    await waitFor(async () => (await get(expiring.id)).state === 'expired', 'the expiry');
    const expiry = await waitFor(() => expiring.message.versions.find((v) => v.via === 'chat.update'), 'the expiry in the message');
    expect(expiry.text).toMatch(/^⌛ flush queue on db-1: nobody approved or rejected it within/);
    const late = slack.click(expiring.message, 'U0OPS', 'pitcrew_approve', expiring.id);
    expect((await post(late)).statusCode).toBe(200);
    expect((await toldTo(late)).text).toMatch(/expired before anyone decided/);
    // One update per outcome, whatever the passes.
    await env.app.context.notifier.pass();
    await env.app.context.notifier.pass();
    expect(expiring.message.versions.filter((v) => v.via === 'chat.update')).toHaveLength(1);
    expect(expiring.runs() + rejected.runs()).toBe(0);
  });

  it("keeps the app's token and signing secret out of the channel's view, its errors and the logs", async () => {
    const view = (await env.api('GET', `/api/v1/channels/${channelId}`)).json();
    expect(view.config).toMatchObject({ botTokenSet: true, signingSecretSet: true, channelId: slack.channelId });
    const half = await env.api('POST', '/api/v1/channels', { name: 'half', type: 'slack', config: { webhookUrl: webhook.url, botToken: slack.botToken } });
    expect(half.statusCode).toBe(400);
    expect(half.json().detail).toMatch(/signingSecret/);
    // A token Slack refuses: the delivery fails, saying why, without the token.
    const wrongToken = `xoxb-9999-${'w'.repeat(20)}`;
    const wrong = await createChannel(env, { name: 'wrong token', type: 'slack', mode: 'errors', config: { webhookUrl: webhook.url, botToken: wrongToken, signingSecret: 'a'.repeat(32), channelId: slack.channelId } });
    await waitingRun('restart cache');
    const failed = await waitFor(async () => (await attemptsOf(env, wrong.id)).find((a) => !a.ok), 'the refused post');
    expect(failed.error).toMatch(/Slack refused chat.postMessage: invalid_auth \(the bot token is not valid/);
    const everything = [JSON.stringify(view), JSON.stringify(half.json()), JSON.stringify(await attemptsOf(env, wrong.id)), JSON.stringify((await env.api('GET', '/api/v1/channels')).json()), env.logs.join('\n')].join('\n');
    for (const secret of [slack.botToken, slack.signingSecret, wrongToken]) expect(everything).not.toContain(secret);
    const audit = JSON.stringify((await env.api('GET', '/api/v1/audit?action=channel.create')).json());
    for (const secret of [slack.botToken, slack.signingSecret, wrongToken]) expect(audit).not.toContain(secret);
  });

  it('posts every message through the app in a channel without an incoming webhook, and refuses a channel with neither', async () => {
    const neither = await env.api('POST', '/api/v1/channels', { name: 'nowhere', type: 'slack', config: {} });
    expect(neither.statusCode).toBe(400);
    expect(neither.json().errors).toEqual([{ path: '/body/config/webhookUrl', message: expect.stringMatching(/is required unless the channel has a Slack app/) }]);

    const appOnly = await createChannel(env, { name: 'app only', type: 'slack', mode: 'all', config: { botToken: slack.botToken, signingSecret: slack.signingSecret, channelId: slack.channelId } });
    expect((await env.api('GET', `/api/v1/channels/${appOnly.id}`)).json().config).toMatchObject({ webhookUrl: null, botTokenSet: true });
    const rule = await env.createWebhookRule({ name: 'warm caches', action: { type: 'script', flavour: 'autofix', runbook: { script: 'true' } } });
    const fired = await env.webhook(rule.triggerId, { HostName: 'db-1', AlarmName: 'cache_cold' });
    expect(fired.statusCode, fired.body).toBe(202);
    // The result (not an approval) posted by the app, the incoming webhook's message as it is.
    const result = await waitFor(() => slack.messages.find((m) => m.text.includes('warm caches') && decisionsOf(m).length === 0), 'the result posted through the app');
    expect(result.channel).toBe(slack.channelId);
    expect(result.blocks[0]).toMatchObject({ type: 'header' });
    expect(webhook.accepted().filter((r) => r.raw.includes('warm caches'))).toEqual([]);
    expect((await env.api('GET', `/api/v1/channels/${appOnly.id}`)).json().status).not.toBe('failing');

    // Taking the app away from it would leave it nowhere to post: refused, the channel unchanged.
    const stripped = await env.api('PATCH', `/api/v1/channels/${appOnly.id}`, { config: { botToken: null, signingSecret: null, channelId: null } });
    expect(stripped.statusCode).toBe(400);
    expect(stripped.json().errors[0].path).toBe('/body/config/webhookUrl');
    expect((await env.api('GET', `/api/v1/channels/${appOnly.id}`)).json().config).toMatchObject({ botTokenSet: true, channelId: slack.channelId });
  });
});
