import fs from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { startTestEnv, type TestEnv } from './support/app.js';
import { spawnAgent, waitOnline, type AgentProcess } from './support/agents.js';
import { startBotFrameworkEmulator, type BotFrameworkEmulator, type EmulatedBot, type PostedActivity } from './support/bot-framework-emulator.js';
import { testDialects } from './support/databases.js';
import { createChannel } from './support/notify.js';
import { invite } from './support/people.js';
import { startReceiver } from './support/receivers.js';
import { waitFor } from './support/wait.js';

interface Card { body: Array<{ type: string; text?: string; actions?: Array<{ type: string; verb?: string; data?: { executionId?: string } }> }> }

const TERMINAL = ['succeeded', 'failed', 'timed_out', 'cancelled', 'lost', 'expired', 'rejected'];
const PASSWORD = 'bot-client-secret-Zq8~w3N.vT0pL9';

// Issue 42 (docs/approvals.md, "From Microsoft Teams"): a Teams channel with an Azure Bot gets the
// approval request as a card with Approve and Reject; a click reaches pitcrew as the Bot Connector
// sends it (a signed JWT, checked as Microsoft documents), decides as the clicking person's
// pitcrew account (by the e-mail Teams gives), and every card shows the outcome, however decided.
// Microsoft's side is test/support/bot-framework-emulator.ts; the agent and databases are real.
describe.each(testDialects())('approvals from Microsoft Teams on %s', (dialect) => {
  let env: TestEnv;
  let agent: AgentProcess;
  let teams: BotFrameworkEmulator;
  let bot: EmulatedBot;
  let channelId: string;
  const marks = fs.mkdtempSync(path.join(os.tmpdir(), 'pitcrew-teams-'));
  const operatorEmail = `teams-op-${dialect}@example.com`;

  beforeAll(async () => {
    teams = await startBotFrameworkEmulator();
    env = await startTestEnv(dialect, { listen: true, sweepIntervalMs: 100, notify: { groupWaitSeconds: 0 }, teamsBot: { openIdMetadataUrl: teams.metadataUrl, loginUrl: teams.loginUrl } });
    const { httpsUrl, fingerprint } = env.listening!;
    agent = spawnAgent({ server: httpsUrl, apiKey: env.tenant.apiKey, hostname: 'db-1', tags: ['db'], fingerprint });
    await waitOnline(env.api, 'db-1');
    bot = teams.register({ appId: 'a1b2c3d4-0000-4000-8000-00000000b07a', appPassword: PASSWORD, tenantId: null });
    const webhook = await startReceiver();
    channelId = (await createChannel(env, {
      name: 'ops in teams', type: 'teams', mode: 'all',
      config: { webhookUrl: webhook.url, botAppId: bot.appId, botAppPassword: PASSWORD, serviceUrl: teams.serviceUrl, conversationId: bot.conversationId },
    })).id;
    await invite(env, operatorEmail, 'operator');
    await invite(env, `teams-viewer-${dialect}@example.com`, 'viewer');
    teams.addMember({ id: '29:operator', name: 'Olivia Operator', email: operatorEmail.toUpperCase() });
    teams.addMember({ id: '29:viewer', name: 'Victor Viewer', email: `teams-viewer-${dialect}@example.com` });
    teams.addMember({ id: '29:stranger', name: 'Sam Stranger', email: 'stranger@example.com' });
  });
  afterAll(async () => {
    await agent.stop();
    await env.close();
    await teams.close();
    fs.rmSync(marks, { recursive: true, force: true });
  });

  async function waitingRun(name: string, approval: Record<string, unknown> = {}) {
    const file = path.join(marks, name);
    const rule = await env.createWebhookRule({ name, approval: { required: true, ...approval }, action: { type: 'script', flavour: 'autofix', runbook: { script: `echo ran >> '${file}'` } } });
    const reply = await env.webhook(rule.triggerId, { HostName: 'db-1', AlarmName: 'disk_full' });
    expect(reply.statusCode, reply.body).toBe(202);
    const id = (reply.json().executionIds as string[])[0]!;
    const card = await waitFor(() => teams.activities.find((a) => JSON.stringify(a.body).includes(id)), `the approval card of ${name} in Teams`);
    return { id, card, runs: () => (fs.existsSync(file) ? fs.readFileSync(file, 'utf8').split('\n').filter(Boolean).length : 0) };
  }
  const get = async (id: string) => (await env.api('GET', `/api/v1/executions/${id}`)).json();
  const ended = (id: string) => waitFor(async () => {
    const e = await get(id);
    return TERMINAL.includes(e.state) ? e : undefined;
  }, `execution ${id} to end`);
  const post = (activity: Record<string, unknown>, token: string | undefined) => env.app.server.inject({
    method: 'POST', url: '/api/v1/chat/teams/activities',
    headers: { 'content-type': 'application/json', ...(token ? { authorization: `Bearer ${token}` } : {}) },
    payload: JSON.stringify(activity),
  });
  async function click(from: string, verb: string, executionId: string) {
    const reply = await post(teams.invoke(bot, from, verb, { executionId }), await teams.signActivity(bot.appId));
    expect(reply.statusCode, reply.body).toBe(200);
    const answer = reply.json() as { statusCode: number; type: string; value: Card };
    expect(answer).toMatchObject({ statusCode: 200, type: 'application/vnd.microsoft.card.adaptive' });
    return { card: answer.value, text: texts(answer.value) };
  }
  const texts = (card: Card) => card.body.map((b) => b.text ?? '').join('\n');
  const cardOf = (activity: PostedActivity) => activity.body.attachments[0]!.content as unknown as Card;
  const latest = (activity: PostedActivity) => (activity.updates.at(-1) ?? activity.body).attachments[0]!.content as unknown as Card;

  it('posts the request as a card with Approve and Reject, approves as the person who clicked, runs it once on the real agent, and updates the card', async () => {
    const { id, card, runs } = await waitingRun('purge cache');
    expect(card.body.attachments[0]!.contentType).toBe('application/vnd.microsoft.card.adaptive');
    const actions = cardOf(card).body.flatMap((b) => b.actions ?? []);
    expect(actions).toEqual([
      expect.objectContaining({ type: 'Action.Execute', verb: 'approve', data: { executionId: id } }),
      expect.objectContaining({ type: 'Action.Execute', verb: 'reject', data: { executionId: id } }),
    ]);
    expect(runs()).toBe(0);

    const { card: answered, text } = await click('29:operator', 'approve', id);
    expect(text).toContain(`Approved by ${operatorEmail}`);
    expect(answered.body.flatMap((b) => b.actions ?? [])).toEqual([]);
    const done = await ended(id);
    expect(done.state).toBe('succeeded');
    expect(runs()).toBe(1);
    const approval = done.transitions.find((t: { to: string }) => t.to === 'queued');
    expect(approval.decidedBy).toMatchObject({ email: operatorEmail, via: 'teams' });
    const audit = (await env.api('GET', `/api/v1/audit?action=execution.approve&target=execution:${id}`)).json().items;
    expect(audit).toHaveLength(1);
    expect(audit[0]).toMatchObject({ via: 'teams', actor: { type: 'user', email: operatorEmail } });

    // The card in the channel, for everyone: replaced with the outcome.
    await waitFor(() => texts(latest(card)).includes(`approved by ${operatorEmail} (teams)`), 'the card updated with the approval');
    // A second click is answered, and changes nothing.
    const again = await click('29:operator', 'approve', id);
    expect(again.text).toMatch(/already approved and is succeeded: it runs once; your approval changed nothing/);
    expect(runs()).toBe(1);
  });

  it('runs it once when two clicks arrive at the same moment', async () => {
    const { id, runs } = await waitingRun('two clicks');
    const answers = await Promise.all([click('29:operator', 'approve', id), click('29:operator', 'approve', id)]);
    expect(answers.filter((a) => a.text.includes('Approved by')).length).toBe(1);
    expect(answers.filter((a) => /runs once; your approval changed nothing/.test(a.text)).length).toBe(1);
    expect((await ended(id)).state).toBe('succeeded');
    expect(runs()).toBe(1);
    expect((await get(id)).transitions.filter((t: { to: string }) => t.to === 'queued')).toHaveLength(1);
  });

  it('refuses a token the Bot Connector did not sign, an expired one, one for another bot or another serviceUrl, and none: 401, nothing changes', async () => {
    const { id } = await waitingRun('forged');
    const activity = teams.invoke(bot, '29:operator', 'approve', { executionId: id });
    const cases: Array<[string, string | undefined, Record<string, unknown>, RegExp]> = [
      ['no token', undefined, activity, /no bearer token/],
      ['another key', await teams.signActivity(bot.appId, { foreignKey: true }), activity, /signature does not verify/],
      ['expired past the 5 minutes of skew', await teams.signActivity(bot.appId, { expiresInSeconds: -400 }), activity, /has expired/],
      ['another bot', await teams.signActivity('ffffffff-0000-4000-8000-000000000000'), activity, /no Teams channel here has the bot app id ffffffff/],
      ['a serviceUrl the token does not vouch for', await teams.signActivity(bot.appId), { ...activity, serviceUrl: 'http://127.0.0.1:9/evil/' }, /serviceUrl claim is not the activity's serviceUrl/],
      ['not a JWT', 'not.a.token', activity, /not a JWT/],
    ];
    for (const [what, token, body, why] of cases) {
      const reply = await post(body, token);
      expect(reply.statusCode, what).toBe(401);
      expect(reply.headers['content-type'], what).toMatch(/application\/problem\+json/);
      expect(reply.json().detail, what).toMatch(why);
      expect(reply.json().detail, what).toMatch(/nothing was done/);
    }
    expect((await get(id)).state).toBe('awaiting_approval');
    expect(teams.activities.find((a) => JSON.stringify(a.body).includes(id))!.updates).toEqual([]);
  });

  it('answers a stranger, a viewer, and an unknown Teams member with why nothing happened', async () => {
    const { id, runs } = await waitingRun('who are you');
    expect((await click('29:stranger', 'approve', id)).text).toMatch(/stranger@example.com is not a member of this pitcrew tenant: nothing was done/);
    expect((await click('29:viewer', 'approve', id)).text).toMatch(/needs an operator or above to approve it, and your role here is viewer/);
    expect((await click('29:nobody', 'reject', id)).text).toMatch(/Teams does not know you as a member of this conversation/);
    expect((await click('29:operator', 'launch', id)).text).toMatch(/not one pitcrew knows: nothing was done/);
    expect((await get(id)).state).toBe('awaiting_approval');
    expect(runs()).toBe(0);
  });

  it('takes a disabled member for nobody: their click decides nothing', async () => {
    const { id, runs } = await waitingRun('left the team');
    const gone = `teams-gone-${dialect}@example.com`;
    await invite(env, gone, 'admin');
    await env.app.context.store.db.updateTable('users').set({ disabled_at: Date.now() }).where('email', '=', gone).execute();
    teams.addMember({ id: '29:gone', name: 'Gone Admin', email: gone });
    expect((await click('29:gone', 'approve', id)).text).toMatch(/is not a member of this pitcrew tenant: nothing was done/);
    expect((await get(id)).state).toBe('awaiting_approval');
    expect(runs()).toBe(0);
  });

  it('rejects from Teams, and updates the card when it is decided elsewhere or nobody decides', async () => {
    const fromTeams = await waitingRun('reject in teams');
    expect((await click('29:operator', 'reject', fromTeams.id)).text).toContain(`Rejected by ${operatorEmail}`);
    expect((await get(fromTeams.id)).state).toBe('rejected');
    await waitFor(() => texts(latest(fromTeams.card)).includes(`rejected by ${operatorEmail} (teams)`), 'the card updated with the rejection');

    const fromApi = await waitingRun('reject by api');
    expect((await env.api('POST', `/api/v1/executions/${fromApi.id}/reject`, { comment: 'not now' })).statusCode).toBe(200);
    await waitFor(() => /rejected by .* \(api\): not now: it never ran/.test(texts(latest(fromApi.card))), 'the card updated with the API rejection');
    expect(latest(fromApi.card).body.flatMap((b) => b.actions ?? [])).toEqual([]);

    const undecided = await waitingRun('nobody decides', { timeoutSeconds: 2 });
    await waitFor(async () => (await get(undecided.id)).state === 'expired', 'the expiry');
    await waitFor(() => texts(latest(undecided.card)).includes('expired undecided, never ran'), 'the card updated with the expiry');
    expect(undecided.runs()).toBe(0);
    expect((await click('29:operator', 'approve', undecided.id)).text).toMatch(/expired before anyone decided .*your approval changed nothing/);
    // Settled cards are updated no more.
    const updates = undecided.card.updates.length;
    await env.app.context.notifier.pass();
    expect(undecided.card.updates.length).toBe(updates);
  });

  it('never shows the bot password in the channel view, the logs or an error', async () => {
    const view = (await env.api('GET', `/api/v1/channels/${channelId}`)).json();
    expect(view.config).toMatchObject({ botAppId: bot.appId, botAppPasswordSet: true, serviceUrl: teams.serviceUrl, conversationId: bot.conversationId });
    expect(JSON.stringify(view)).not.toContain(PASSWORD);
    // A wrong password: the token is refused, and the error says so without the password.
    const wrong = await createChannel(env, {
      name: 'wrong password', type: 'teams', mode: 'all',
      config: { webhookUrl: 'http://127.0.0.1:9/hook', botAppId: bot.appId, botAppPassword: `${PASSWORD}-old`, serviceUrl: teams.serviceUrl, conversationId: bot.conversationId },
    });
    await waitingRun('with a wrong password').catch(() => undefined);
    const failed = await waitFor(async () => (await env.api('GET', `/api/v1/channels/${wrong.id}`)).json().lastError as string | null ?? undefined, 'the refused delivery');
    expect(failed).toMatch(/the bot's token was refused: .*answered 401.*AADSTS7000215/);
    expect(failed).not.toContain(PASSWORD);
    const audit = (await env.api('GET', '/api/v1/audit?targetType=channel&limit=100')).json();
    expect(JSON.stringify(audit)).not.toContain(PASSWORD);
    expect(env.logs.join('')).not.toContain(PASSWORD);
    // Nor the Bot Connector's tokens the clicks carried (a JWT starts eyJ…).
    expect(env.logs.join('')).not.toMatch(/eyJ[\w-]{10,}\.eyJ/);
  });

  it("gets a single-tenant bot's token from its own tenant", async () => {
    const single = teams.register({ appId: 'a1b2c3d4-0000-4000-8000-0000000051e7', appPassword: `${PASSWORD}-single`, tenantId: 'contoso.onmicrosoft.com' });
    const rule = await env.createWebhookRule({ name: 'single tenant', approval: { required: true }, action: { type: 'script', flavour: 'autofix', runbook: { script: 'true' } } });
    await createChannel(env, {
      name: 'single-tenant bot', type: 'teams', mode: 'all', ruleIds: [rule.id],
      config: { webhookUrl: 'http://127.0.0.1:9/hook', botAppId: single.appId, botAppPassword: single.appPassword, botTenantId: 'contoso.onmicrosoft.com', serviceUrl: teams.serviceUrl, conversationId: single.conversationId },
    });
    const reply = await env.webhook(rule.triggerId, { HostName: 'db-1', AlarmName: 'disk_full' });
    const id = (reply.json().executionIds as string[])[0]!;
    // The emulator refuses the token at any other tenant (AADSTS90002), so a posted card proves the path.
    const card = await waitFor(() => teams.activities.find((a) => a.appId === single.appId && JSON.stringify(a.body).includes(id)), 'the card posted by the single-tenant bot');
    expect(card.conversationId).toBe(single.conversationId);
  });

  it('refuses bot settings without the password or conversation', async () => {
    const reply = await env.api('POST', '/api/v1/channels', { name: 'half a bot', type: 'teams', config: { webhookUrl: 'https://example.webhook.office.com/x', botAppId: bot.appId } });
    expect(reply.statusCode).toBe(400);
    expect(reply.json().detail).toMatch(/botAppPassword|serviceUrl|conversationId/);
    // Each missing setting by its own path, saying what it goes with, not Ajv's "must have properties … when property … is present".
    expect(reply.json().errors).toContainEqual({ path: '/body/config/botAppPassword', message: 'is required with "botAppId"' });
  });
});
