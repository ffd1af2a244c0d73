import fs from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { afterAll, beforeAll, describe, expect, it, onTestFailed } from 'vitest';
import { spawnAgent, type AgentProcess } from './support/agents.js';
import { createTestDatabase, testDialects, type TestDatabase } from './support/databases.js';
import { alertingTo, assertToolsInstalled, PROMETHEUS, startAlertmanager, startServing, type ToolProcess } from './support/prometheus.js';
import { runCli, startServer, type ServerProcess } from './support/process.js';
import { waitFor } from './support/wait.js';

/*
 * Issue 17's "done when": real Prometheus (Debian's 2.42) evaluates an alert that fires for two
 * instances, real Alertmanager (Debian's 0.25) groups it and posts its own webhook body to the
 * integration's URL, real agents run the rules' scripts on the hosts the `instance` labels name.
 * Then Alertmanager repeats the notification (repeat_interval), and Prometheus resolves the alert
 * after its rule file is rewritten and reloaded. CI installs both (apt-get install prometheus
 * prometheus-alertmanager, .ci/run).
 */
const ALERT = 'PitcrewE2eDiskFull';
/** Real processes on a busy machine: each step may take a while, none needs a fixed time. */
const STEP_MS = 60_000;

const firingRules = `groups:
  - name: pitcrew-e2e
    interval: 1s
    rules:
      - alert: ${ALERT}
        expr: label_replace(vector(1), "instance", "web-1:9100", "", "") or label_replace(vector(1), "instance", "web-2:9100", "", "")
        for: 0s
        labels:
          job: node
          severity: critical
        annotations:
          summary: "disk of {{ $labels.instance }} almost full"
`;
// Same alert name and labels (so Prometheus carries the alerts' state over the reload), no series:
// both alerts resolve at the next evaluation.
const resolvedRules = firingRules.replace(/expr: .*/, 'expr: vector(1) > 2');

interface Event {
  id: string;
  outcome: string;
  reason: string | null;
  source: string;
  env: Record<string, string>;
  executionIds: string[];
}

interface Execution {
  id: string;
  hostname: string;
  state: string;
  stdout: string;
  stderr: string;
}

describe.each(testDialects())('Prometheus and Alertmanager driving real agents on %s', (dialect) => {
  let database: TestDatabase;
  let server: ServerProcess;
  let tenant: { apiKey: string; token: string };
  let work: string;
  const agents: AgentProcess[] = [];
  const tools: Record<string, ToolProcess> = {};
  let prometheusUrl: string;
  let firing: { id: string } | undefined;
  let both: { id: string } | undefined;

  beforeAll(async () => {
    assertToolsInstalled();
    work = fs.mkdtempSync(path.join(os.tmpdir(), 'pitcrew-am-e2e-'));
    database = await createTestDatabase(dialect);
    tenant = JSON.parse((await runCli(['bootstrap', '--json'], database.env)).stdout);
    server = await startServer(database.env);
    for (const hostname of ['web-1', 'web-2']) agents.push(spawnAgent({ server: server.httpsUrl, apiKey: tenant.apiKey, hostname, fingerprint: server.fingerprint }));
    for (const hostname of ['web-1', 'web-2']) {
      await waitFor(async () => (await api('GET', `/api/v1/hosts?hostname=${hostname}`)).body.items[0]?.status === 'online', `${hostname} online`, STEP_MS);
    }
  });

  afterAll(async () => {
    await Promise.all([...agents.map((agent) => agent.kill()), ...Object.values(tools).map((tool) => tool.kill())]);
    await server?.kill();
    await database?.drop();
    if (work) fs.rmSync(work, { recursive: true, force: true });
  });

  // eslint-disable-next-line @typescript-eslint/no-explicit-any
  async function api(method: string, url: string, body?: unknown): Promise<{ status: number; body: Record<string, any> }> {
    const response = await fetch(`${server.url}${url}`, {
      method,
      headers: { authorization: `Bearer ${tenant.token}`, ...(body ? { 'content-type': 'application/json' } : {}) },
      body: body ? JSON.stringify(body) : undefined,
    });
    return { status: response.status, body: (await response.json()) as Record<string, unknown> };
  }

  const eventsOf = async (ruleId: string): Promise<Event[]> => (await api('GET', `/api/v1/rules/${ruleId}/events?limit=100`)).body.items;
  const executionsOf = async (ruleId: string): Promise<Execution[]> => (await api('GET', `/api/v1/executions?ruleId=${ruleId}&limit=100`)).body.items;

  /** What the tools and the service said, printed when the test fails. */
  const logs = () => Object.entries({ ...tools, pitcrew: server })
    .map(([name, tool]) => `--- ${name} (last 6000 characters) ---\n${tool.output().slice(-6000)}`).join('\n');
  async function step<T>(what: string, check: () => Promise<T | undefined | false>): Promise<T> {
    return waitFor(check, what, STEP_MS).catch(async (error: Error) => {
      const seen = async (rule: { id: string } | undefined) => (rule ? {
        events: (await eventsOf(rule.id)).map((e) => `${e.env.HostName} ${e.env.State} ${e.outcome}`),
        executions: (await executionsOf(rule.id)).map((e) => `${e.hostname} ${e.state} ${JSON.stringify(e.stdout)}`),
      } : 'not created');
      throw new Error(`${error.message}; so far: ${JSON.stringify({ firing: await seen(firing), both: await seen(both) }, null, 1)}`);
    });
  }

  /** Both hosts' events of a rule that satisfy `wanted`, once there is one per host. */
  const perHost = (ruleId: string, wanted: (event: Event) => boolean) => async () => {
    const events = (await eventsOf(ruleId)).filter(wanted);
    const hosts = new Set(events.map((e) => e.env.HostName));
    return hosts.has('web-1') && hosts.has('web-2') ? events : undefined;
  };

  /** The executions of the events, once every one of them has ended. */
  const ended = (ids: string[]) => async () => {
    const executions = await Promise.all(ids.map(async (id) => (await api('GET', `/api/v1/executions/${id}`)).body as Execution));
    return executions.every((e) => !['queued', 'dispatched', 'running'].includes(e.state)) ? executions : undefined;
  };

  it('runs the firing rule once per alert on its instance host, records a repeat as a duplicate, and acts on the resolve only where the rule asks', async () => {
    onTestFailed(() => console.error(logs()));
    // The integration and its rules, through the API as an operator would set them up.
    const made = await api('POST', '/api/v1/integrations', { name: 'prometheus', type: 'alertmanager' });
    expect(made.status, JSON.stringify(made.body)).toBe(201);
    const webhookUrl = (made.body.url as string).replace('<api_key>', tenant.apiKey);
    expect(webhookUrl.startsWith(`${server.url}/api/v1/trigger/channel/alertmanager/`)).toBe(true);
    const rule = async (name: string, on?: string) => {
      const created = await api('POST', '/api/v1/rules', {
        name,
        trigger: { type: 'alert', integrationId: made.body.id, alarmName: 'PitcrewE2e*', severity: ['critical'], ...(on ? { on } : {}) },
        action: { type: 'script', flavour: 'autofix', runbook: { script: 'echo "$LABEL_instance $LABEL_job $State $AlarmName"' } },
        target: { type: 'trigger_host' },
        infrastructureType: 'On_Premise',
      });
      expect(created.status, JSON.stringify(created.body)).toBe(201);
      return created.body as { id: string };
    };
    firing = await rule('fix-disk');
    both = await rule('note-disk', 'both');

    // Alertmanager: one group per alertname, flushed within a second, repeated every 2 s
    // (repeat_interval must not be zero; a repeat goes out at the group's next flush after it).
    const alertmanager = await startAlertmanager(work, webhookUrl, { groupBy: ['alertname'], repeatInterval: '2s', flags: ['--log.level=debug'] }, STEP_MS);
    tools.alertmanager = alertmanager.tool;

    // Prometheus: evaluates every second, alerts to that Alertmanager (and keeps each alert valid
    // there for 4 × the resend delay, 20 s: no resolve by expiry on a slow machine).
    fs.writeFileSync(path.join(work, 'rules.yml'), firingRules);
    fs.writeFileSync(path.join(work, 'prometheus.yml'), `global:
  evaluation_interval: 1s
rule_files:
  - ${JSON.stringify(path.join(work, 'rules.yml'))}
${alertingTo(alertmanager.url)}`);
    const prometheus = await startServing(PROMETHEUS, (port) => [
      `--config.file=${path.join(work, 'prometheus.yml')}`,
      `--storage.tsdb.path=${path.join(work, 'prometheus-data')}`,
      `--web.listen-address=127.0.0.1:${port}`,
      '--web.enable-lifecycle',
      // Prometheus finds its Alertmanager ~5 s after it starts (discovery updates are throttled) and
      // drops what it evaluated before; by default it would only send again after a minute.
      '--rules.alert.resend-delay=5s',
    ], STEP_MS);
    tools.prometheus = prometheus.tool;
    prometheusUrl = prometheus.url;

    // Firing: one notification with both alerts; each is its own event, on its own host.
    const fired = await step('the firing rule accepted for web-1 and web-2', perHost(firing.id, (e) => e.outcome === 'accepted'));
    expect(fired).toHaveLength(2);
    for (const event of fired) {
      expect(event.source).toBe('alertmanager');
      expect(event.env).toMatchObject({
        AlarmName: ALERT, Severity: 'critical', Source: 'alertmanager', State: 'firing',
        LABEL_alertname: ALERT, LABEL_instance: `${event.env.HostName}:9100`, LABEL_job: 'node',
        ANNOTATION_summary: `disk of ${event.env.HostName}:9100 almost full`,
      });
      expect(event.executionIds).toHaveLength(1);
    }
    const firedRuns = await step('the firing runs ended', ended(fired.flatMap((e) => e.executionIds)));
    expect(firedRuns.map((e) => [e.hostname, e.state, e.stdout, e.stderr]).sort()).toEqual([
      ['web-1', 'succeeded', `web-1:9100 node firing ${ALERT}\n`, ''],
      ['web-2', 'succeeded', `web-2:9100 node firing ${ALERT}\n`, ''],
    ]);
    const bothFired = await step('the on: both rule accepted the firing for web-1 and web-2', perHost(both.id, (e) => e.outcome === 'accepted' && e.env.State === 'firing'));
    expect(bothFired).toHaveLength(2);

    // Alertmanager sends the group again after repeat_interval: recorded, nothing run.
    const repeats = await step('a repeat recorded as a duplicate for web-1 and web-2', perHost(firing.id, (e) => e.outcome === 'duplicate'));
    for (const event of repeats) expect(event).toMatchObject({ executionIds: [], env: { State: 'firing' } });
    expect(await executionsOf(firing.id)).toHaveLength(2);

    // Resolve: the rule now returns nothing; Prometheus sends the alerts resolved, Alertmanager notifies.
    fs.writeFileSync(path.join(work, 'rules.yml'), resolvedRules);
    const reload = await fetch(`${prometheusUrl}/-/reload`, { method: 'POST' });
    expect(reload.status, await reload.text()).toBe(200);
    const recorded = await step('the resolve recorded by the firing rule for web-1 and web-2', perHost(firing.id, (e) => e.outcome === 'recorded'));
    for (const event of recorded) {
      expect(event).toMatchObject({ executionIds: [], env: { State: 'resolved', AlarmName: ALERT } });
      expect(event.reason).toMatch(/resolved and the rule acts on firing alerts/);
    }
    const bothResolved = await step('the on: both rule accepted the resolve for web-1 and web-2', perHost(both.id, (e) => e.outcome === 'accepted' && e.env.State === 'resolved'));
    expect(bothResolved).toHaveLength(2);
    const resolvedRuns = await step('the resolved runs ended', ended(bothResolved.flatMap((e) => e.executionIds)));
    expect(resolvedRuns.map((e) => [e.hostname, e.state, e.stdout]).sort()).toEqual([
      ['web-1', 'succeeded', `web-1:9100 node resolved ${ALERT}\n`],
      ['web-2', 'succeeded', `web-2:9100 node resolved ${ALERT}\n`],
    ]);

    // The firing rule ran exactly the two scripts of the firing, whatever else arrived.
    expect((await executionsOf(firing.id)).map((e) => e.id).sort()).toEqual(firedRuns.map((e) => e.id).sort());
    expect(await executionsOf(both.id)).toHaveLength(4);
  }, 5 * STEP_MS);
});
