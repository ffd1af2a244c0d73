import fs from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { afterAll, describe, expect, it } from 'vitest';
import { spawnAgent, waitOnline, type AgentProcess } from '../support/agents.js';
import { failResponses, goByKeys, holdResponses, signInAs } from '../support/browser.js';
import { uiSession } from '../support/ui-session.js';
import { waitFor } from '../support/wait.js';

const FLEET = ['fan-a', 'fan-b'];
const TERMINAL = ['succeeded', 'failed', 'timed_out', 'cancelled', 'lost', 'expired'];

// Rule safety as a person on call sees it, in Chromium against a real server and real agents:
// the limit a storm used up and the escalation it raised, the escalations of every rule, the
// outcome of each alarm and why, a fan-out waiting its turn and stopped by failures, and a rule
// created with every safety setting.
describe('rule safety in the web UI', () => {
  const agents: AgentProcess[] = [];
  // The service's error is part of the escalations page's story.
  const ui = uiSession({
    refusedStatuses: [503],
    setup: async (env) => {
      const { httpsUrl, fingerprint } = env.listening!;
      for (const hostname of FLEET) agents.push(spawnAgent({ server: httpsUrl, apiKey: env.tenant.apiKey, hostname, tags: ['fan'], fingerprint }));
      for (const hostname of FLEET) await waitOnline(env.api, hostname);
    },
  });
  const gate = fs.mkdtempSync(path.join(os.tmpdir(), 'pitcrew-safety-ui-'));
  afterAll(async () => {
    await Promise.all(agents.map((agent) => agent.stop()));
    fs.rmSync(gate, { recursive: true, force: true });
  });

  const nav = (name: string) => ui.page.getByRole('navigation', { name: 'main' }).getByRole('link', { name });
  const panel = (heading: string) => ui.page.locator('section.panel', { has: ui.page.getByRole('heading', { name: heading }) });

  /** Fires `count` alarms for `host` one after the other, as a storm arrives; returns the outcomes. */
  async function storm(triggerId: string, host: string, count: number): Promise<string[]> {
    const outcomes: string[] = [];
    for (let i = 0; i < count; i += 1) outcomes.push((await ui.env.webhook(triggerId, { HostName: host, AlarmName: 'disk_full' })).json().outcome);
    return outcomes;
  }

  const execution = async (id: string) => (await ui.env.api('GET', `/api/v1/executions/${id}`)).json();

  it('shows the limit a storm used up per host, the escalation it raised, and the limited alarms with their reason', async () => {
    const { page, env, base } = ui;
    const rule = await env.createWebhookRule({ name: 'clean disk', actionLimit: { max: 2, windowSeconds: 3600, onLimit: 'escalate' }, action: { type: 'script', flavour: 'autofix', runbook: { script: 'true' } } });
    await signInAs(page, base, env.tenant.token, `/rules/${rule.id}`);
    const limits = panel('Action limit per host');
    await limits.getByText('2 per host per 3600 s (1 h), then escalate to a human').waitFor();
    await limits.getByText('No host has used the limit').waitFor();
    await limits.getByText('Past it, the alarms that cannot act are escalated to a person, once per host and window.').waitFor();
    // No escalation yet: no empty card for them above the events.
    await panel('Events').waitFor();
    expect(await panel('Escalations').count()).toBe(0);

    expect(await storm(rule.triggerId, 'fan-a', 6)).toEqual(['accepted', 'accepted', 'limited', 'limited', 'limited', 'limited']);
    // The page refreshes on its own: a person watching it sees the storm land.
    const usage = limits.locator('tr[data-host="fan-a"]');
    await expect.poll(() => usage.innerText(), { timeout: 10_000 }).toMatch(/fan-a\s+2 \/ 2\s+limited\s+in (59 min|1 h)\s+(pending|notified)\s+4 limited events\s+window closes in (59 min|1 h)/);
    const escalation = panel('Escalations').locator('tr[data-escalation]');
    await expect.poll(() => escalation.innerText()).toMatch(/(pending|notified)\s+fan-a\s+4\s+opened\s+[\s\S]+·\s+closes\s+in (59 min|1 h)\s+rule "clean disk" reached its action limit on fan-a \(2 of 2 executions within 3600 s\)/);

    // The outcome filter keeps the limited alarms, each with its reason.
    const events = panel('Events');
    await events.getByLabel('Outcome').selectOption('limited');
    await expect.poll(() => page.url()).toBe(`${base}/rules/${rule.id}?outcome=limited`);
    await expect.poll(() => events.locator('tbody tr').count()).toBe(4);
    expect(await events.locator('tr[data-outcome="accepted"]').count()).toBe(0);
    expect(await events.locator('tr[data-outcome="limited"]').first().innerText()).toMatch(/limited\s+fan-a\s+action limit reached on fan-a: 2 executions within 3600 s already/);

    // Each limited count leads to the alarms behind it.
    await events.getByLabel('Outcome').selectOption('');
    await expect.poll(() => events.locator('tbody tr').count()).toBe(6);
    await usage.getByRole('link', { name: '4 limited events' }).click();
    await expect.poll(() => page.url()).toBe(`${base}/rules/${rule.id}?outcome=limited`);
  });

  it('filters events by outcome: flapping with its reason, duplicates explained, and the Idempotency-Key a call carried', async () => {
    const { page, env, base } = ui;
    const rule = await env.createWebhookRule({ name: 'flappy', flapping: { enabled: true, maxEvents: 2, windowSeconds: 300, cooldownSeconds: 600 } });
    const fire = (key?: string) => env.webhook(rule.triggerId, { HostName: 'gone-1' }, { headers: key ? { 'idempotency-key': key } : {} });
    expect((await fire('nagios-4711')).json().outcome).toBe('no_target');
    expect((await fire('nagios-4711')).json()).toMatchObject({ outcome: 'no_target', replayed: true });
    expect((await fire()).json().outcome).toBe('no_target');
    expect((await fire()).json().outcome).toBe('flapping');

    await signInAs(page, base, env.tenant.token, `/rules/${rule.id}`);
    const events = panel('Events');
    await expect.poll(() => events.locator('tbody tr').count()).toBe(3);
    await events.locator('tr', { hasText: 'Idempotency-Key nagios-4711' }).waitFor();
    expect(await events.getByText('Idempotency-Key').count()).toBe(1);

    await events.getByLabel('Outcome').selectOption('flapping');
    await expect.poll(() => events.locator('tbody tr').count()).toBe(1);
    expect(await events.locator('tr[data-outcome="flapping"]').innerText()).toMatch(/flapping: more than 2 alarms for host gone-1 within 300 s \(maxEvents\); actions resume once host gone-1 has been quiet for 600 s/);

    await events.getByLabel('Outcome').selectOption('duplicate');
    await events.getByText('No event with outcome duplicate').waitFor();
    await events.getByText(/A webhook retry with the same Idempotency-Key gets the original event's reply and is not stored again/).waitFor();
    await events.getByRole('button', { name: 'Show every outcome' }).click();
    await expect.poll(() => events.locator('tbody tr').count()).toBe(3);
    expect(page.url()).toBe(`${base}/rules/${rule.id}`);
  });

  it("lists every rule's escalations, filtered by rule, host and state, and says so when loading, failing or empty", async () => {
    const { page, env, base } = ui;
    const other = await env.createWebhookRule({ name: 'restart cache', actionLimit: { max: 1, windowSeconds: 600 }, action: { type: 'script', flavour: 'autofix', runbook: { script: 'true' } } });
    expect(await storm(other.triggerId, 'fan-b', 3)).toEqual(['accepted', 'limited', 'limited']);
    await signInAs(page, base, env.tenant.token, '/rules');

    const release = await holdResponses(page, '**/api/v1/escalations?*');
    await nav('Escalations').click();
    await page.getByText('Loading escalations…').waitFor();
    await release();
    const rows = page.locator('tbody tr');
    await expect.poll(() => rows.count()).toBe(2);
    expect(await page.locator('tr', { hasText: 'restart cache' }).innerText()).toMatch(/(pending|notified)\s+restart cache\s+fan-b\s+2\s+/);
    expect(await page.locator('tr', { hasText: 'clean disk' }).innerText()).toMatch(/(pending|notified)\s+clean disk\s+fan-a\s+4\s+/);

    await page.getByLabel('Rule').selectOption({ label: 'restart cache' });
    await expect.poll(() => rows.count()).toBe(1);
    expect(page.url()).toBe(`${base}/escalations?rule=${other.id}`);
    await page.getByLabel('Rule').selectOption('');
    await page.getByLabel('Filter by hostname').fill('fan-a');
    await expect.poll(() => rows.innerText()).toMatch(/clean disk\s+fan-a/);
    await page.getByLabel('Filter by hostname').fill('web-9');
    await page.getByText('No escalation matches these filters').waitFor();
    await page.getByRole('button', { name: 'Clear filters' }).click();
    // The notifier sends each escalation within moments: pending turns notified.
    await page.getByLabel('State').selectOption('notified');
    await expect.poll(() => page.url()).toBe(`${base}/escalations?state=notified`);
    await expect.poll(() => rows.count(), { timeout: 10_000 }).toBe(2);
    await page.getByLabel('State').selectOption('any');
    await expect.poll(() => page.url()).toBe(`${base}/escalations`);

    // A row leads to its rule; g x comes back.
    await page.getByRole('link', { name: 'restart cache' }).click();
    await page.getByRole('heading', { name: 'restart cache' }).waitFor();
    await goByKeys(page, 'x', /\/escalations$/);
    await page.getByRole('heading', { name: 'Escalations' }).waitFor();

    const recover = await failResponses(page, '**/api/v1/escalations?*', 'the sqlite database at /data/pitcrew.db does not answer');
    await page.reload();
    const banner = page.getByRole('alert');
    await banner.getByText('Could not load escalations. the sqlite database at /data/pitcrew.db does not answer').waitFor();
    await recover();
    await banner.getByRole('button', { name: 'Retry' }).click();
    await expect.poll(() => rows.count()).toBe(2);
  });

  it('shows a fan-out host held, waiting for its turn, then cancelled by maxErrors with the reason', async () => {
    const { page, env, base } = ui;
    const script = `while [ ! -e '${gate}/go' ]; do sleep 0.05; done\nexit 3\n`;
    const rule = await env.createWebhookRule({
      name: 'risky fleet fix',
      target: { type: 'specific_tags', tags: ['fan'], maxConcurrency: 1, maxErrors: 1 },
      action: { type: 'script', flavour: 'autofix', runbook: { script } },
    });
    const [first, second] = (await env.webhook(rule.triggerId, {})).json().executionIds as string[];
    await waitFor(async () => (await execution(first!)).state === 'running', 'the first host to run');

    await signInAs(page, base, env.tenant.token, `/executions?rule=${rule.id}`);
    const held = page.locator('tbody tr', { hasText: 'fan-b' });
    await expect.poll(() => held.innerText()).toMatch(/queued\s+held\s+.*waiting for its turn: this fan-out runs on at most 1 host at once \(maxConcurrency\)/);
    await held.getByRole('link', { name: 'fan-b', exact: true }).click();
    await page.getByRole('status').getByText(/Held, waiting for its turn\. waiting for its turn: this fan-out runs on at most 1 host/).waitFor();

    fs.writeFileSync(path.join(gate, 'go'), '');
    const reason = 'cancelled before it ran: 1 host of this fan-out failed (maxErrors 1), so the rest were stopped';
    await page.locator('.banner', { hasText: reason }).waitFor({ timeout: 15_000 });
    await page.getByText('cancelled', { exact: true }).first().waitFor();
    expect(await execution(second!)).toMatchObject({ state: 'cancelled', held: false });
    expect(TERMINAL).toContain((await execution(first!)).state);

    await page.getByRole('link', { name: 'risky fleet fix' }).click();
    const executions = panel('Executions');
    await expect.poll(() => executions.locator('tr', { hasText: 'fan-b' }).innerText()).toContain(reason);
    await expect.poll(() => executions.locator('tr', { hasText: 'fan-a' }).innerText()).toMatch(/failed/);
    await panel('Settings').getByText('at most 1 host at once, stops after 1 failed host').waitFor();
  });

  it('creates a rule with flapping, action limit and fan-out settings that reach the API exactly as entered', async () => {
    const { page, env, base } = ui;
    await signInAs(page, base, env.tenant.token, '/rules/new');
    await page.getByLabel('Rule name').fill('guarded restart');
    await page.getByRole('button', { name: 'Next' }).click();

    await page.getByRole('heading', { name: 'Flapping protection' }).waitFor();
    await page.getByLabel('Protect this rule against flapping').check();
    await page.getByLabel('Events allowed').fill('7');
    await page.getByLabel('State changes allowed').fill('4');
    await page.getByLabel('Window (seconds)').fill('120');
    await page.getByLabel('Cool-down (seconds)').fill('900');
    await page.getByRole('button', { name: 'Next' }).click();

    await page.getByText('Hosts with tags').click();
    const tags = page.getByRole('textbox', { name: 'Tags' });
    await tags.fill('fan');
    await tags.press('Enter');
    await page.getByText('2 hosts match').waitFor();
    await page.getByLabel('Hosts at once').fill('0');
    await page.getByLabel('Failed hosts before stopping').fill('1');
    await page.getByRole('button', { name: 'Next' }).click();
    await page.getByText('must be from 1 to 10000').waitFor();
    expect(await page.getByLabel('Hosts at once').getAttribute('aria-invalid')).toBe('true');
    await page.getByLabel('Hosts at once').fill('2');
    await page.getByRole('button', { name: 'Next' }).click();

    await page.locator('.cm-content').waitFor();
    await page.getByRole('button', { name: 'Next' }).click();
    await page.getByRole('heading', { name: 'Action limit' }).waitFor();
    await page.getByText('Limit runs per host').click();
    await page.getByLabel('Runs allowed').fill('2');
    await page.getByLabel('Per window (seconds)').fill('600');
    await page.getByLabel('Then').selectOption('drop');
    await page.getByRole('button', { name: 'Next' }).click();
    await page.getByText('at most 2 hosts at once, stops after 1 failed host').waitFor();
    await page.getByRole('button', { name: 'Create rule' }).click();
    await page.getByRole('heading', { name: 'guarded restart' }).waitFor();

    const created = (await env.api('GET', '/api/v1/rules?search=guarded%20restart')).json().items[0];
    expect(created.flapping).toEqual({ enabled: true, maxEvents: 7, windowSeconds: 120, cooldownSeconds: 900, maxStateChanges: 4 });
    expect(created.actionLimit).toEqual({ max: 2, windowSeconds: 600, onLimit: 'drop' });
    expect(created.target).toEqual({ type: 'specific_tags', tags: ['fan'], maxConcurrency: 2, maxErrors: 1 });

    // The rule view says the same, and the edit wizard reads every setting back.
    const settings = panel('Settings');
    await settings.getByText('more than 7 events or 4 state changes per host in 120 s (2 min): actions pause until 900 s (15 min) of quiet').waitFor();
    await settings.getByText('2 per host per 600 s (10 min), then drop').waitFor();
    await panel('Action limit per host').getByText('This rule drops the alarms past its limit (outcome limited) and tells nobody.').waitFor();
    await page.getByRole('link', { name: 'Edit' }).click();
    await page.getByRole('button', { name: /Review and create/ }).click();
    await page.getByRole('button', { name: 'Save changes' }).click();
    await page.getByRole('heading', { name: 'guarded restart' }).waitFor();
    const saved = (await env.api('GET', `/api/v1/rules/${created.id}`)).json();
    expect({ flapping: saved.flapping, actionLimit: saved.actionLimit, target: saved.target }).toEqual({ flapping: created.flapping, actionLimit: created.actionLimit, target: created.target });
  });
});
