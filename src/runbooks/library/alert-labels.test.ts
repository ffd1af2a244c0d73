import { execFileSync } from 'node:child_process';
import { describe, expect, it } from 'vitest';
import { labelDefaults, labelPrelude, labelVariable, VARIABLE_LABELS } from './alert-labels.js';
import { STARTER_RUNBOOKS } from './catalogue.js';

const starter = (slug: string) => STARTER_RUNBOOKS.find((entry) => entry.slug === slug)!;

describe('starter variables from an alert’s labels', () => {
  it('names only variables some starter reads', () => {
    const read = new Set(STARTER_RUNBOOKS.flatMap((entry) => entry.env));
    for (const variable of Object.keys(VARIABLE_LABELS)) expect(read.has(variable), variable).toBe(true);
  });

  it.each([
    ['restart-service', ['alertname', 'instance', 'job', 'service'], [{ variable: 'ServiceName', labels: ['LABEL_service'] }]],
    // node_exporter's systemd collector names the unit `name`; both present: service first.
    ['restart-service', ['name', 'service', 'severity'], [{ variable: 'ServiceName', labels: ['LABEL_service', 'LABEL_name'] }]],
    ['restart-service', ['Systemd-Unit'], [{ variable: 'ServiceName', labels: ['LABEL_Systemd_Unit'] }]],
    ['restart-service', ['alertname', 'instance', 'job'], []],
    ['log-tail', ['logfile', 'service'], [{ variable: 'LogFile', labels: ['LABEL_logfile'] }]],
    ['cert-expiry', ['instance', 'filepath'], [{ variable: 'CertEndpoints', labels: ['LABEL_instance'] }, { variable: 'CertFiles', labels: ['LABEL_filepath'] }]],
    // An instance is a TLS endpoint for a certificate alarm only: no other starter reads it.
    ['top-memory', ['instance', 'service'], []],
    ['disk-cleanup', ['mountpoint', 'device'], []],
  ])('%s with labels %j', (slug, labels, expected) => {
    expect(labelDefaults(starter(slug), labels)).toEqual(expected);
  });

  it('writes a label’s name as the alert’s runs receive it', () => {
    expect(labelVariable('team.name')).toBe('LABEL_team_name');
  });

  describe('in sh, run by dash and bash', () => {
    const prelude = labelPrelude('sh', [{ variable: 'ServiceName', labels: ['LABEL_service', 'LABEL_name'] }]);
    const run = (shell: string, env: Record<string, string>) =>
      execFileSync(shell, ['-c', `set -u\n${prelude}printf '%s' "$ServiceName"`], { env: { PATH: process.env.PATH, ...env }, encoding: 'utf8' });

    it('reads as one line a person can edit', () => {
      expect(prelude).toBe('# from the alert\'s labels unless set (pitcrew one-click automation)\n: "${ServiceName:=${LABEL_service:-${LABEL_name:-}}}"\n');
    });

    it.each(['dash', 'bash'])('%s: the first label set gives the variable, an explicit one wins, none leaves it empty', (shell) => {
      expect(run(shell, { LABEL_service: 'shop', LABEL_name: 'other.service' })).toBe('shop');
      expect(run(shell, { LABEL_name: 'shop.service' })).toBe('shop.service');
      expect(run(shell, { ServiceName: 'nginx', LABEL_service: 'shop' })).toBe('nginx');
      expect(run(shell, {})).toBe('');
    });
  });

  it('writes the other interpreters’ syntax, and nothing for no variable', () => {
    const defaults = [{ variable: 'LogFile', labels: ['LABEL_logfile', 'LABEL_log_path'] }];
    expect(labelPrelude('bash', defaults)).toContain(': "${LogFile:=${LABEL_logfile:-${LABEL_log_path:-}}}"');
    expect(labelPrelude('python', defaults)).toContain("import os\nos.environ['LogFile'] = os.environ.get('LogFile') or os.environ.get('LABEL_logfile') or os.environ.get('LABEL_log_path') or ''\n");
    expect(labelPrelude('pwsh', defaults)).toContain('if (-not $env:LogFile) { $env:LogFile = @($env:LABEL_logfile, $env:LABEL_log_path) | Where-Object { $_ } | Select-Object -First 1 }\n');
    expect(labelPrelude('sh', [])).toBe('');
  });

  it('runs in python as in sh', () => {
    const prelude = labelPrelude('python', [{ variable: 'LogFile', labels: ['LABEL_logfile', 'LABEL_log_path'] }]);
    const run = (env: Record<string, string>) => execFileSync('python3', ['-c', `${prelude}print(os.environ['LogFile'], end='')`], { env: { PATH: process.env.PATH, ...env }, encoding: 'utf8' });
    expect(run({ LABEL_log_path: '/var/log/a.log' })).toBe('/var/log/a.log');
    expect(run({ LogFile: '/var/log/b.log', LABEL_logfile: '/var/log/a.log' })).toBe('/var/log/b.log');
  });
});
