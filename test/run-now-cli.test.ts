import fs from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { runCli, startServer, type ServerProcess } from './support/process.js';

const dataDir = fs.mkdtempSync(path.join(os.tmpdir(), 'pitcrew-cli-run-'));

// `pitcrew rules run` as a person types it, against a running server (each call a process of its own).
describe('pitcrew rules run', { timeout: 90_000 }, () => {
  let server: ServerProcess;
  let token: string;
  const rules = (args: string[]) => runCli(['rules', ...args], { PITCREW_SERVER: server.url, PITCREW_TOKEN: token });
  const api = async (method: string, url: string, body?: unknown) => {
    const response = await fetch(`${server.url}${url}`, { method, headers: { authorization: `Bearer ${token}`, ...(body ? { 'content-type': 'application/json' } : {}) }, ...(body ? { body: JSON.stringify(body) } : {}) });
    return response.json() as Promise<Record<string, unknown>>;
  };

  beforeAll(async () => {
    ({ token } = JSON.parse((await runCli(['bootstrap', '--json'], { PITCREW_DATA_DIR: dataDir })).stdout));
    server = await startServer({ PITCREW_DATA_DIR: dataDir });
  });
  afterAll(async () => {
    await server?.stop();
    fs.rmSync(dataDir, { recursive: true, force: true });
  });

  it('runs a rule with the payload its flags make, prints the outcome and executions; --dry-run runs nothing', async () => {
    const rule = await api('POST', '/api/v1/rules', {
      name: 'cli run', trigger: { type: 'webhook' }, target: { type: 'cli_machine' }, infrastructureType: 'On_Premise',
      action: { type: 'cli', runbook: { script: 'echo "$HostName $Disk"' } },
    });
    const ran = await rules(['run', String(rule.id), '--host', 'web-1', '--alarm', 'disk_full', '--set', 'Disk=/var', '--set', 'Note=a=b']);
    expect(ran.code, ran.stderr).toBe(0);
    const [, eventId, executionId] = /^event (\S+): accepted\nexecutions: (\S+)\n/.exec(ran.stdout) ?? [];
    expect(ran.stdout).toBe(`event ${eventId}: accepted\nexecutions: ${executionId}\nfollow one: npx pitcrew executions show ${executionId}\n`);
    const event = await api('GET', `/api/v1/events/${eventId}`);
    expect(event).toMatchObject({
      source: 'manual', requestedBy: { type: 'token', name: 'bootstrap' },
      payload: { HostName: 'web-1', AlarmName: 'disk_full', MetaData: { Disk: '/var', Note: 'a=b' } }, executionIds: [executionId],
    });

    const dry = await rules(['run', String(rule.id), '--host', 'web-1', '--dry-run']);
    expect(dry.stdout).toMatch(/^event \S+: dry_run \(.+\)\na dry run: recorded, nothing ran\n$/);
    const json = JSON.parse((await rules(['run', String(rule.id), '--payload', '{"HostName":"web-2","MetaData":{"PATH":"/x"}}', '--dry-run', '--json'])).stdout);
    expect(json).toMatchObject({ outcome: 'dry_run', act: false, executionIds: [], skippedEnv: [{ name: 'PATH' }] });
    expect((await api('GET', `/api/v1/events/${json.eventId}`)).payload).toEqual({ HostName: 'web-2', MetaData: { PATH: '/x' }, Act: false });
  });

  it('explains a mistake: no id, a --set without =, an unknown rule, a field the API refuses', async () => {
    expect(await rules(['run'])).toMatchObject({ code: 2, stderr: expect.stringMatching(/run needs the rule id/) });
    expect(await rules(['run', '0199aaaa-0000-7000-8000-000000000000', '--set', 'Disk'])).toMatchObject({ code: 2, stderr: expect.stringMatching(/--set takes KEY=VALUE .* got "Disk"/) });
    expect(await rules(['run', '0199aaaa-0000-7000-8000-000000000000'])).toMatchObject({ code: 1, stderr: expect.stringMatching(/rule 0199aaaa-0000-7000-8000-000000000000 does not exist in this tenant \(PITCREW_ERR_NOT_FOUND\)/) });
    const rule = await api('POST', '/api/v1/rules', { name: 'refusing', trigger: { type: 'webhook' }, target: { type: 'trigger_host' }, infrastructureType: 'On_Premise', action: { type: 'script', flavour: 'autofix', runbook: { script: 'true' } } });
    const refused = await rules(['run', String(rule.id), '--host', 'x'.repeat(300)]);
    expect(refused).toMatchObject({ code: 1, stderr: expect.stringMatching(/\(PITCREW_ERR_VALIDATION\)\n {2}\/body\/payload\/HostName: HostName is 300 characters long/) });
    expect((await runCli(['rules', 'run', '--help'], {})).stdout).toContain('run ID [--host NAME] [--alarm NAME] [--set KEY=VALUE]...');
  });
});
