import { execFile } from 'node:child_process';
import fs from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { slackShape } from './support/platforms.js';
import { runCli, startServer, type ServerProcess } from './support/process.js';
import { startReceiver } from './support/receivers.js';
import { startEc2Emulator, type Ec2Emulator } from './support/ec2-emulator.js';
import { waitFor } from './support/wait.js';

const dataDir = fs.mkdtempSync(path.join(os.tmpdir(), 'pitcrew-cli-channels-'));

/** A command the service printed, run as a person pastes it: bash, with their exports. */
function shell(command: string, exports: Record<string, string>): Promise<{ code: number | null; stdout: string; stderr: string }> {
  return new Promise((resolve, reject) => {
    execFile('bash', ['-c', command], { env: { PATH: process.env.PATH, ...exports } }, (error, stdout, stderr) => {
      if (error && typeof error.code !== 'number') reject(error);
      else resolve({ code: error ? (error.code as number) : 0, stdout, stderr });
    });
  });
}

// Each case runs the CLI as a process several times (about a second each, several on a busy machine):
// the suite's 30 s is too little when CI shares its cores; two timed out so in a loaded run.
describe('pitcrew channels', { timeout: 90_000 }, () => {
  let server: ServerProcess;
  let token: string;
  let apiKey: string;
  let ec2: Ec2Emulator;
  const cli = (args: string[], extra: Record<string, string> = {}) => runCli(['channels', ...args], { PITCREW_SERVER: server.url, PITCREW_TOKEN: token, ...extra });

  beforeAll(async () => {
    ({ token, apiKey } = JSON.parse((await runCli(['bootstrap', '--json'], { PITCREW_DATA_DIR: dataDir })).stdout));
    // The test receivers listen on loopback, which notifications reach only when the operator opens it.
    ec2 = await startEc2Emulator();
    server = await startServer({ PITCREW_DATA_DIR: dataDir, PITCREW_EGRESS_ALLOW_NETWORKS: '127.0.0.0/8', PITCREW_AWS_ENDPOINT_URL: ec2.url });
  });
  afterAll(async () => {
    await server?.stop();
    await ec2?.close();
    fs.rmSync(dataDir, { recursive: true, force: true });
  });

  it('creates, lists, tests and deletes a channel, never printing its secret', async () => {
    const receiver = await startReceiver(slackShape);
    const configFile = path.join(dataDir, 'slack.json');
    fs.writeFileSync(configFile, JSON.stringify({ webhookUrl: `${receiver.url}/services/T1/B1/cli-secret-token` }));
    const created = await cli(['create', '--name', 'ops', '--type', 'slack', '--mode', 'errors', '--config', `@${configFile}`]);
    expect(created.code, created.stderr).toBe(0);
    const id = /\(([0-9a-f-]{36})\)/.exec(created.stdout)![1]!;
    expect(created.stdout).toMatch(/^created slack channel "ops" \(.+\), mode errors; try it: npx pitcrew channels test /);

    const listed = await cli(['list']);
    expect(listed.stdout).toMatch(/^ID\s+NAME\s+TYPE\s+MODE\s+STATUS\s+LAST DELIVERED\s+LAST ERROR\n/);
    expect(listed.stdout).toMatch(new RegExp(`${id}\\s+ops\\s+slack\\s+errors\\s+never_used`));
    const json = JSON.parse((await cli(['list', '--json'])).stdout);
    expect(json.items[0].config.webhookUrl).toBe(`${receiver.url}/…(set)`);

    const tested = await cli(['test', id]);
    expect(tested.code, tested.stderr).toBe(0);
    expect(tested.stdout).toMatch(/^delivered \(HTTP 200\) in \d+ ms/);
    expect(receiver.accepted()).toHaveLength(1);

    receiver.answer(410, 'channel_is_archived');
    const refused = await cli(['test', id]);
    expect(refused.code).toBe(1);
    expect(refused.stderr).toMatch(/answered 410 Gone: "channel_is_archived" \(PITCREW_ERR_CHANNEL_DELIVERY_FAILED\)/);

    expect((await cli(['delete', id])).stdout).toBe(`deleted ${id}\n`);
    // The key that sealed the URL was made on the server's first start, readable by its owner only.
    expect(fs.statSync(path.join(dataDir, 'secret.key')).mode & 0o777).toBe(0o600);
    expect(server.output()).toContain(`"source":"${path.join(dataDir, 'secret.key')}"`);
    for (const text of [created.stdout, listed.stdout, tested.stdout, refused.stderr, server.output()]) expect(text).not.toContain('cli-secret-token');
  });

  it('pitcrew api-keys makes an enrol key for agents, lists scopes and narrows a key', async () => {
    const keys = (args: string[]) => runCli(['api-keys', ...args], { PITCREW_SERVER: server.url, PITCREW_TOKEN: token });
    const made = await keys(['create', '--name', 'agents', '--scope', 'enrol']);
    expect(made.code, made.stderr).toBe(0);
    const [key, said] = made.stdout.split('\n');
    expect(key).toMatch(/^[0-9a-f]{64}$/);
    expect(said).toMatch(/^issued key "agents" \(.+\), scopes enrol: shown once, store it now$/);

    const listed = await keys(['list']);
    expect(listed.stdout).toMatch(/\bbootstrap {2,}webhook,enrol {2,}…[0-9a-f]{4} {2,}active\n/);
    expect(listed.stdout).toMatch(/\bagents {2,}enrol {2,}…[0-9a-f]{4} {2,}active\n/);
    // One table: every column starts where its header does, whatever the length of the names above it.
    const [header, ...rows] = listed.stdout.trimEnd().split('\n');
    expect(header).toMatch(/^ID {2,}NAME {2,}SCOPES {2,}KEY {2,}STATUS$/);
    for (const column of ['NAME', 'SCOPES', 'KEY', 'STATUS']) {
      for (const row of rows) expect(row.slice(header!.indexOf(column)), `${column} in ${row}`).toMatch(/^(bootstrap|agents|webhook|enrol|…|active)/);
    }
    expect(listed.stdout).not.toContain(key);
    const bootstrapId = (JSON.parse((await keys(['list', '--json'])).stdout).items as Array<{ id: string; name: string }>).find((k) => k.name === 'bootstrap')!.id;
    expect((await keys(['narrow', bootstrapId, '--scope', 'webhook'])).stdout).toBe(`key "bootstrap" (${bootstrapId}) now has scopes webhook\n`);
    const widened = await keys(['narrow', bootstrapId, '--scope', 'webhook', '--scope', 'enrol']);
    expect(widened.code).toBe(1);
    expect(widened.stderr).toMatch(/cannot gain the enrol scope/);
    expect((await keys(['create'])).code).toBe(2);
  });

  it('pitcrew integrations creates one and prints the URL to give the tool, lists and deletes it', async () => {
    const integrations = (args: string[]) => runCli(['integrations', ...args], { PITCREW_SERVER: server.url, PITCREW_TOKEN: token });
    const made = await integrations(['create', '--name', 'prometheus', '--type', 'alertmanager', '--config', '{"hostLabel":"nodename"}']);
    expect(made.code, made.stderr).toBe(0);
    const id = /\(([0-9a-f-]{36})\)/.exec(made.stdout)![1]!;
    expect(made.stdout).toContain(`/api/v1/trigger/channel/alertmanager/<api_key>/${id}`);
    const curl = made.stdout.split('\n').find((line) => line.startsWith('curl '))!;
    expect(made.stdout).toContain(`(export PITCREW_API_KEY first; its rules act on it as on the tool's own):\n${curl}\nor send a test alert (a dry run): npx pitcrew integrations test ${id}\n`);
    expect((await integrations(['list'])).stdout).toMatch(new RegExp(`${id} {2,}prometheus {2,}alertmanager {2,}never {2,}- {2,}http`));
    const refused = await integrations(['create', '--name', 'x', '--type', 'nagios']);
    expect(refused).toMatchObject({ code: 1, stderr: expect.stringMatching(/type/) });
    expect((await integrations(['create', '--name', 'x', '--type', 'generic', '--config', '{oops'])).code).toBe(2);
    const test = await integrations(['test', id, '--host', 'web-9', '--alarm', 'DiskFull']);
    expect(test.code, test.stderr).toBe(0);
    expect(test.stdout).toBe('sent test alert "DiskFull" (a dry run)\nno rule matched it\n');
    const alerts = await integrations(['alerts', id]);
    expect(alerts.stdout).toMatch(/^RECEIVED {2,}STATE {3}ALERT {5}HOST {3}WHAT IT DID\n\S+Z {2}firing {2}DiskFull {2}web-9 {2}no rule matched\n$/);
    // The printed curl, run as printed: Alertmanager's own body, its host under the integration's hostLabel.
    const sent = await shell(curl, { PITCREW_API_KEY: apiKey });
    expect(JSON.parse(sent.stdout)).toMatchObject({ alerts: [{ state: 'firing', alarmName: 'NodeFilesystemAlmostFull', hostName: 'web-1', events: [] }] });
    expect((await integrations(['alerts', id])).stdout).toMatch(/\n\S+Z {2}firing {2}NodeFilesystemAlmostFull {2}web-1 {2}no rule matched\n\S+Z {2}firing {2}DiskFull {18}web-9 {2}no rule matched\n$/);
    // A dry run of a rule that would find no host says so, in the ingest's words.
    const rule = await fetch(`${server.url}/api/v1/rules`, {
      method: 'POST', headers: { authorization: `Bearer ${token}`, 'content-type': 'application/json' },
      body: JSON.stringify({ name: 'on prometheus', trigger: { type: 'alert', integrationId: id }, action: { type: 'script', flavour: 'autofix', runbook: { script: 'true' } }, target: { type: 'trigger_host' }, infrastructureType: 'On_Premise' }),
    }).then((response) => response.json() as Promise<{ id: string }>);
    const dry = await integrations(['test', id, '--host', 'web-9', '--alarm', 'DiskFull']);
    expect(dry.stdout).toBe(`sent test alert "DiskFull" (a dry run)\nrule ${rule.id}: dry_run; had it acted: no_target (no host named "web-9" has an agent in this tenant)\n`);
    expect((await integrations(['alerts', id, '--limit', 'lots'])).code).toBe(2);
    expect((await integrations(['delete', id])).stdout).toMatch(/answers 404 from now on/);
    expect((await integrations(['list'])).stdout).not.toContain(id);
  });

  it("gives every integration a curl that posts the tool's own body, and a test alert, both working as printed", async () => {
    const made = async (type: string, extra: Record<string, unknown> = {}) => {
      const response = await fetch(`${server.url}/api/v1/integrations`, {
        method: 'POST', headers: { authorization: `Bearer ${token}`, 'content-type': 'application/json' }, body: JSON.stringify({ name: `sample ${type} ${JSON.stringify(extra)}`, type, ...extra }),
      });
      expect(response.status).toBe(201);
      return (await response.json()) as { id: string; curl?: string; testCurl: string };
    };
    const cases: Array<[string, Record<string, unknown>, string | null]> = [
      ['alertmanager', {}, 'web-1'], ['grafana', {}, 'web-1'], ['monasca', {}, 'web-1'], ['zabbix', {}, 'web-1'], ['datadog', {}, 'web-1'],
      ['pagerduty', {}, null], ['pagerduty', { config: { hostField: 'service.summary' } }, 'web-1'],
      ['generic', { config: { mapping: { alerts: 'alerts', name: 'labels.alertname', host: 'labels.instance', state: 'status' } } }, 'web-1'],
      ['datadog', { secret: 'datadog-shared-secret' }, 'web-1'],
    ];
    for (const [type, extra, host] of cases) {
      const integration = await made(type, extra);
      const sent = await shell(integration.curl!, { PITCREW_API_KEY: apiKey, PITCREW_INTEGRATION_SECRET: 'datadog-shared-secret' });
      expect(JSON.parse(sent.stdout), `${type} ${JSON.stringify(extra)}: ${sent.stdout}`).toMatchObject({ alerts: [{ state: 'firing', hostName: host }] });
    }
    // Only AWS signs what SNS sends, only Grafana with the integration's secret: a test alert instead.
    for (const [type, extra] of [['cloudwatch_sns', {}], ['grafana', { secret: 'grafana-signing-secret' }]] as const) {
      const integration = await made(type, extra);
      expect(integration.curl).toBeUndefined();
      const tested = JSON.parse((await shell(integration.testCurl, { PITCREW_TOKEN: token })).stdout);
      expect(tested).toMatchObject({ alert: { alarmName: 'PitcrewTestAlert', hostName: 'web-1', events: [] } });
    }
  });

  it('pitcrew schedules previews a schedule, lists cron rules with their next tick, pauses and resumes one', async () => {
    const schedules = (args: string[]) => runCli(['schedules', ...args], { PITCREW_SERVER: server.url, PITCREW_TOKEN: token });
    const next = await schedules(['next', '0 9 * * 1-5', '--timezone', 'Europe/Paris', '--count', '3']);
    expect(next.code, next.stderr).toBe(0);
    const lines = next.stdout.trimEnd().split('\n');
    expect(lines).toHaveLength(3);
    for (const line of lines) expect(line).toMatch(/^\d{4}-\d\d-\d\d 09:00:00 (CET|CEST) {2}\(\d{4}-\d\d-\d\dT0[78]:00:00\.000Z\)$/);
    const bad = await schedules(['next', '0 25 * * *']);
    expect(bad).toMatchObject({ code: 1, stderr: expect.stringMatching(/\/schedule: not a valid schedule/) });

    const created = await fetch(`${server.url}/api/v1/rules`, {
      method: 'POST', headers: { authorization: `Bearer ${token}`, 'content-type': 'application/json' },
      body: JSON.stringify({ name: 'nightly cleanup', trigger: { type: 'cron', schedule: '30 2 * * *', timezone: 'Europe/Berlin' }, action: { type: 'script', flavour: 'autofix', runbook: { script: 'true' } }, target: { type: 'specific_tags', tags: ['web'] }, infrastructureType: 'On_Premise' }),
    });
    expect(created.status).toBe(201);
    const rule = (await created.json()) as { id: string; schedule: { nextTicks: string[] } };
    expect((await schedules(['list'])).stdout).toMatch(new RegExp(`^ID {2,}NAME {2,}SCHEDULE {2,}ZONE {2,}NEXT TICK {2,}LAST TICK\n(.*\n)*${rule.id} {2,}nightly cleanup {2,}30 2 \\* \\* \\* {2,}Europe/Berlin {2,}${rule.schedule.nextTicks[0]} {2,}never\n`));
    expect((await schedules(['pause', rule.id])).stdout).toBe('paused "nightly cleanup": no tick fires until it is resumed\n');
    expect((await schedules(['list'])).stdout).toMatch(new RegExp(`${rule.id} {2,}nightly cleanup {2,}30 2 \\* \\* \\* {2,}Europe/Berlin {2,}paused {2,}never\n`));
    expect((await schedules(['resume', rule.id])).stdout).toMatch(/^resumed "nightly cleanup": next tick \d{4}-\d\d-\d\dT0[01]:30:00\.000Z\n$/);
    expect((await schedules(['next'])).code).toBe(2);
  });

  it('pitcrew credentials stores a key from a file, never from the command line, tests, rotates and deletes it', async () => {
    const credentials = (args: string[]) => runCli(['credentials', ...args], { PITCREW_SERVER: server.url, PITCREW_TOKEN: token });
    const key = { accessKeyId: 'AKIAJ2EXAMPLE7CLI0X1', secretAccessKey: 'cli/secret/EXAMPLEKEY/0123456789abcd' };
    ec2.addKey(key.accessKeyId, key.secretAccessKey);
    const file = path.join(dataDir, 'aws.json');
    fs.writeFileSync(file, JSON.stringify(key), { mode: 0o600 });
    const inline = await credentials(['create', '--name', 'aws', '--provider', 'aws', '--secret', JSON.stringify(key)]);
    expect(inline).toMatchObject({ code: 2, stderr: expect.stringMatching(/--secret takes @FILE or - \(stdin\), never the secret itself/) });
    const made = await credentials(['create', '--name', 'aws', '--provider', 'aws', '--secret', `@${file}`]);
    expect(made.code, made.stderr).toBe(0);
    const id = /\(([0-9a-f-]{36})\)/.exec(made.stdout)![1]!;
    expect(made.stdout).toBe(`stored aws credential "aws" (${id}), sealed; try it: npx pitcrew credentials test ${id}\n`);
    expect((await credentials(['test', id])).stdout).toMatch(/^ok: AWS accepted the key: \d+ regions visible to it \(ec2:DescribeRegions, \d+ ms\)\n$/);
    const listed = await credentials(['list']);
    expect(listed.stdout).toMatch(new RegExp(`^ID {2,}NAME {2}PROVIDER {2}IDENTIFIES {13}LAST TEST\n${id} {2}aws {3}aws {7}accessKeyId=AKIA…I0X1 {2}ok \\S+Z\n$`));
    fs.writeFileSync(file, JSON.stringify({ ...key, secretAccessKey: 'cli/rotated/EXAMPLEKEY/0123456789' }));
    expect((await credentials(['rotate', id, '--secret', `@${file}`])).stdout).toBe(`replaced the secret of "aws"; test it again: npx pitcrew credentials test ${id}\n`);
    const refused = await credentials(['test', id]);
    expect(refused).toMatchObject({ code: 1, stderr: expect.stringMatching(/AWS refused ec2:DescribeRegions: AuthFailure/) });
    expect(refused.stderr + listed.stdout).not.toMatch(/cli\/(secret|rotated)/);
    expect((await credentials(['delete', id])).stdout).toBe(`deleted credential ${id}: its sealed secret is gone\n`);
  });

  it('pitcrew rules makes a cloud rule from a file and turns it off; pitcrew executions lists, shows and cancels its runs', { timeout: 180_000 }, async () => {
    const rules = (args: string[]) => runCli(['rules', ...args], { PITCREW_SERVER: server.url, PITCREW_TOKEN: token });
    const executions = (args: string[]) => runCli(['executions', ...args], { PITCREW_SERVER: server.url, PITCREW_TOKEN: token });
    const key = { accessKeyId: 'AKIAJ2EXAMPLE7RULES1', secretAccessKey: 'rules/secret/EXAMPLEKEY/0123456789ab' };
    ec2.addKey(key.accessKeyId, key.secretAccessKey);
    const credential = await (await fetch(`${server.url}/api/v1/credentials`, { method: 'POST', headers: { authorization: `Bearer ${token}`, 'content-type': 'application/json' }, body: JSON.stringify({ name: 'aws rules', provider: 'aws', secret: key }) })).json() as { id: string };
    const file = path.join(dataDir, 'rule.json');
    fs.writeFileSync(file, JSON.stringify({
      name: 'start stopped workers', trigger: { type: 'webhook' }, target: { type: 'trigger_host' }, infrastructureType: 'CLOUD_EC2',
      action: { type: 'cloud', operation: 'start', region: 'eu-west-1', credentialId: credential.id, instances: { from: 'payload' } },
    }));
    expect((await rules(['create', '--file', '{"name":"x"}'])).code).toBe(2);
    const made = await rules(['create', '--file', `@${file}`]);
    expect(made.code, made.stderr).toBe(0);
    const ruleId = /\(([0-9a-f-]{36})\)/.exec(made.stdout)![1]!;
    expect(made.stdout).toMatch(new RegExp(`^created rule "start stopped workers" \\(${ruleId}\\): webhook, cloud start \\(aws\\), trigger_host\nfire it: curl `));
    expect((await rules(['list'])).stdout).toMatch(new RegExp(`\n${ruleId} {2,}start stopped workers {2,}on {2,}webhook {2,}cloud start \\(aws\\) {2,}trigger_host {2,}never\n`));

    // A start whose instance never settles: the run waits for it (PITCREW polls every 5 s), and is cancelled.
    ec2.transitionPolls = 1_000;
    ec2.addInstance({ id: 'i-0c1c2c3c', region: 'eu-west-1', state: 'stopped' });
    const rule = JSON.parse((await rules(['show', ruleId])).stdout) as { trigger: { triggerId: string } };
    const fired = await (await fetch(`${server.url}/api/v1/trigger/channel/webhook/${apiKey}/${rule.trigger.triggerId}`, { method: 'POST', headers: { 'content-type': 'application/json' }, body: JSON.stringify({ InstanceId: 'i-0c1c2c3c' }) })).json() as { executionIds: string[] };
    const executionId = fired.executionIds[0]!;
    const stateOf = async () => ((await (await fetch(`${server.url}/api/v1/executions/${executionId}`, { headers: { authorization: `Bearer ${token}` } })).json()) as { state: string }).state;
    await waitFor(async () => (await stateOf()) === 'running', 'the run waiting for the instance');
    const listed = (await executions(['list', '--rule', ruleId])).stdout;
    expect(listed).toMatch(new RegExp(`^ID {2,}STATE {4}KIND {3}WHERE {7}QUEUED {20}REASON\n${executionId} {2}running {2}cloud {2}i-0c1c2c3c {2}\\S+Z {2}running on the service\n$`));
    const cancelled = await executions(['cancel', executionId]);
    expect(cancelled.code, cancelled.stderr).toBe(0);
    expect(cancelled.stdout).toMatch(new RegExp(`^(cancelled|cancel requested \\(it is running; .*\\)): execution ${executionId} on i-0c1c2c3c\n$`));
    await waitFor(async () => (await stateOf()) === 'cancelled', 'the run cancelled');
    const shown = (await executions(['show', executionId])).stdout;
    expect(shown).toMatch(new RegExp(`^execution ${executionId} \\(cloud\\) on i-0c1c2c3c: cancelled\n`));
    expect(shown).toMatch(/reason: cancelled on request; it was stopped\n/);
    expect(shown).toMatch(/ running → cancelled: cancelled on request/);
    expect((await executions(['cancel', executionId]))).toMatchObject({ code: 1, stderr: expect.stringMatching(/already ended \(cancelled\); there is nothing to cancel/) });
    ec2.transitionPolls = 1;

    expect((await rules(['disable', ruleId])).stdout).toBe('rule "start stopped workers" is off: its events are recorded, nothing runs\n');
    expect((await rules(['list', '--json'])).stdout).toContain('"enabled": false');
    expect((await rules(['delete', ruleId])).stdout).toBe(`deleted rule ${ruleId}\n`);
    expect((await executions(['list', '--state', 'sleeping'])).code).toBe(1);
  });

  it('sets and shows the escalation contacts', async () => {
    const contacts = (args: string[]) => runCli(['escalation-contacts', ...args], { PITCREW_SERVER: server.url, PITCREW_TOKEN: token });
    const chat = /\(([0-9a-f-]{36})\)/.exec((await cli(['create', '--name', 'oncall', '--type', 'slack', '--config', '{"webhookUrl":"https://hooks.example.com/x"}'])).stdout)![1]!;
    const refused = await contacts(['set', '--email', 'oncall@example.com']);
    expect(refused).toMatchObject({ code: 1, stderr: expect.stringMatching(/\/body\/emails: .*create an email channel first/) });
    const set = await contacts(['set', '--channel', chat]);
    expect(set.code, set.stderr).toBe(0);
    expect(set.stdout).toBe(`emails         -\nchannels       ${chat}\nemail channel  (the first email channel)\n`);
    expect(JSON.parse((await contacts(['get', '--json'])).stdout)).toMatchObject({ emails: [], channelIds: [chat], emailChannelId: null });
  });

  it('explains a mistake: a missing token, a bad config, a field the API refuses', async () => {
    const noToken = await runCli(['channels', 'list'], { PITCREW_SERVER: server.url });
    expect(noToken).toMatchObject({ code: 2, stderr: expect.stringMatching(/no management token: pass --token or set PITCREW_TOKEN/) });
    const badJson = await cli(['create', '--name', 'x', '--type', 'slack', '--config', '{nope']);
    expect(badJson).toMatchObject({ code: 2, stderr: expect.stringMatching(/--config is not valid JSON/) });
    const refused = await cli(['create', '--name', 'x', '--type', 'teams', '--config', '{}']);
    expect(refused.code).toBe(1);
    expect(refused.stderr).toMatch(/\(PITCREW_ERR_VALIDATION\)\n {2}\/body\/config\/webhookUrl: is required/);
    const unknown = await cli(['mute']);
    expect(unknown).toMatchObject({ code: 2, stderr: expect.stringMatching(/unknown subcommand "mute"/) });
    const closed = await startReceiver();
    await closed.close();
    const down = await runCli(['channels', 'list'], { PITCREW_SERVER: closed.url, PITCREW_TOKEN: token });
    expect(down).toMatchObject({ code: 1, stderr: expect.stringMatching(/cannot reach http:\/\/127\.0\.0\.1:\d+ \(ECONNREFUSED\); is pitcrew server running there\?/) });
  });
});
