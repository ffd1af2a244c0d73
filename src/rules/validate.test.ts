import { describe, expect, it } from 'vitest';
import type { RuleInput } from './schema.js';
import { crossFieldErrors } from './validate.js';

const script = { type: 'script', flavour: 'autofix', runbook: { script: 'systemctl restart nginx' } } as const;
const ACTIONS = {
  script,
  cloud: { type: 'cloud', operation: 'reboot', region: 'eu-west-1', credentialId: '01900000-0000-7000-8000-0000000000c1' },
  cli: { type: 'cli', runbook: { script: 'aws ec2 describe-instances' } },
  graph_snapshot: { type: 'graph_snapshot' },
  email_runbook: { type: 'email_runbook', runbook: { notes: 'Page the DBA.' } },
} as const satisfies Record<RuleInput['action']['type'], RuleInput['action']>;
const TARGETS = {
  trigger_host: { type: 'trigger_host' },
  specific_host: { type: 'specific_host', hostname: 'web-1' },
  specific_tags: { type: 'specific_tags', tags: ['web', 'eu'] },
  cli_machine: { type: 'cli_machine' },
} as const satisfies Record<RuleInput['target']['type'], RuleInput['target']>;

function rule(overrides: Partial<RuleInput> = {}): RuleInput {
  return { name: 'r', trigger: { type: 'webhook' }, action: script, target: TARGETS.trigger_host, infrastructureType: 'On_Premise', ...overrides };
}

const paths = (input: RuleInput) => crossFieldErrors(input).map((e) => e.path);

describe('crossFieldErrors', () => {
  it('finds nothing wrong with a consistent rule', () => {
    expect(crossFieldErrors(rule())).toEqual([]);
    expect(crossFieldErrors(rule({ trigger: { type: 'alert', integrationId: '01900000-0000-7000-8000-000000000000', alarmName: 'disk_full' }, target: TARGETS.specific_tags }))).toEqual([]);
    expect(crossFieldErrors(rule({ trigger: { type: 'cron', schedule: '*/5 * * * *', timezone: 'Europe/Paris' }, target: TARGETS.specific_host }))).toEqual([]);
  });

  describe('which targets each action can act on', () => {
    const allowed: Record<keyof typeof ACTIONS, Array<keyof typeof TARGETS>> = {
      script: ['trigger_host', 'specific_host', 'specific_tags'],
      cloud: ['trigger_host', 'specific_host', 'specific_tags'],
      cli: ['cli_machine'],
      graph_snapshot: ['trigger_host', 'specific_host', 'specific_tags', 'cli_machine'],
      email_runbook: ['trigger_host', 'specific_host', 'specific_tags', 'cli_machine'],
    };
    const cases = Object.entries(ACTIONS).flatMap(([action, value]) =>
      Object.entries(TARGETS).map(([target, t]) => [action, target, value, t, allowed[action as keyof typeof ACTIONS].includes(target as keyof typeof TARGETS)] as const),
    );

    it.each(cases)('%s on %s', (action, target, actionValue, targetValue, ok) => {
      const errors = crossFieldErrors(rule({ action: actionValue, target: targetValue, infrastructureType: action === 'cloud' ? 'CLOUD_EC2' : 'On_Premise' }));
      if (ok) {
        expect(errors).toEqual([]);
      } else {
        expect(errors).toHaveLength(1);
        expect(errors[0]!.path).toBe('/target/type');
        expect(errors[0]!.message).toContain(`a ${action} action cannot target ${target}`);
        for (const kind of allowed[action as keyof typeof ACTIONS]) expect(errors[0]!.message).toContain(kind);
      }
    });
  });

  it.each(['CLOUD_EC2', 'CLOUD_AZURE', 'CLOUD_GCP', 'CLOUD_OPENSTACK'] as const)('accepts a cloud action on %s', (infrastructureType) => {
    // A GCP action's region is a zone.
    const action = infrastructureType === 'CLOUD_GCP' ? { ...ACTIONS.cloud, region: 'europe-west1-b' } : ACTIONS.cloud;
    expect(crossFieldErrors(rule({ action, infrastructureType }))).toEqual([]);
  });

  it('asks a cloud action for its credential, an AWS one for its region, terminate for its confirmation, and the provider of its type', () => {
    const cloud = (action: Record<string, unknown>, infrastructureType = 'CLOUD_EC2') => paths(rule({ action: { type: 'cloud', operation: 'reboot', ...action } as never, infrastructureType: infrastructureType as never }));
    expect(cloud({})).toEqual(['/action/credentialId', '/action/region']);
    expect(cloud({ credentialId: 'c' }, 'CLOUD_OPENSTACK')).toEqual([]);
    expect(cloud({ credentialId: 'c', region: 'eu-west-1', operation: 'terminate' })).toEqual(['/action/confirmTerminate']);
    expect(cloud({ credentialId: 'c', region: 'eu-west-1', operation: 'terminate', confirmTerminate: true })).toEqual([]);
    expect(cloud({ credentialId: 'c', provider: 'gcp' })).toEqual(['/action/provider']);
    expect(cloud({ credentialId: 'c' }, 'CLOUD_GCP')).toEqual([]);
    expect(cloud({ credentialId: 'c', region: 'europe-west1' }, 'CLOUD_GCP')).toEqual(['/action/region']);
    expect(cloud({ credentialId: 'c', instances: { tags: { env: 'prod', 'team_ü': 'søk-1' } } }, 'CLOUD_GCP')).toEqual([]);
    expect(cloud({ credentialId: 'c', instances: { tags: { Env: 'prod' } } }, 'CLOUD_GCP')).toEqual(['/action/instances/tags']);
    expect(cloud({ credentialId: 'c', instances: { tags: { env: 'x"y' } } }, 'CLOUD_GCP')).toEqual(['/action/instances/tags']);
  });

  it('refuses a cloud action on On_Premise, at infrastructureType', () => {
    const errors = crossFieldErrors(rule({ action: ACTIONS.cloud, infrastructureType: 'On_Premise' }));
    expect(errors).toEqual([{ path: '/infrastructureType', message: expect.stringContaining('cloud infrastructure type') }]);
  });

  it('asks a cloud action without an infrastructure type for its cloud, by name when the action names its provider', () => {
    const { infrastructureType: _none, ...body } = rule({ action: ACTIONS.cloud });
    expect(crossFieldErrors(body)).toEqual([{ path: '/infrastructureType', message: "a cloud action needs its cloud's infrastructure type: send the type of its cloud: CLOUD_EC2 (aws), CLOUD_AZURE (azure), CLOUD_GCP (gcp), CLOUD_OPENSTACK (openstack)" }]);
    expect(crossFieldErrors({ ...body, action: { ...ACTIONS.cloud, provider: 'aws' } })).toEqual([{ path: '/infrastructureType', message: 'a cloud action needs its cloud\'s infrastructure type: send "infrastructureType": "CLOUD_EC2"' }]);
  });

  it.each<[string, RuleInput['target'], string, RegExp]>([
    ['specific_host without a hostname', { type: 'specific_host' }, '/target/hostname', /needs the hostname/],
    ['specific_tags without tags', { type: 'specific_tags' }, '/target/tags', /at least one tag/],
    ['specific_tags with an empty tag list', { type: 'specific_tags', tags: [] }, '/target/tags', /at least one tag/],
    ['a hostname on another target', { type: 'trigger_host', hostname: 'web-1' }, '/target/hostname', /only used with target type specific_host/],
    ['tags on another target', { type: 'specific_host', hostname: 'web-1', tags: ['web'] }, '/target/tags', /only used with target type specific_tags/],
    ['maxConcurrency on one host', { type: 'trigger_host', maxConcurrency: 2 }, '/target/maxConcurrency', /limits a fan-out over tags.*not trigger_host/],
    ['maxErrors on one host', { type: 'specific_host', hostname: 'web-1', maxErrors: 1 }, '/target/maxErrors', /only used with target type specific_tags/],
  ])('refuses %s', (_case, target, path, message) => {
    const errors = crossFieldErrors(rule({ target }));
    expect(errors.map((e) => e.path)).toEqual([path]);
    expect(errors[0]!.message).toMatch(message);
  });

  describe('cron triggers', () => {
    const cron = (schedule: string, timezone?: string): Partial<RuleInput> => ({
      trigger: { type: 'cron', schedule, ...(timezone === undefined ? {} : { timezone }) },
      target: TARGETS.specific_tags,
    });

    it.each(['*/5 * * * *', '0 3 * * 1-5', '0 0 12 * * *', '@daily'])('accepts the schedule %j', (schedule) => {
      expect(crossFieldErrors(rule(cron(schedule)))).toEqual([]);
    });

    it.each(['not a cron', '61 * * * *', '* * * 13 *', '', '@every 5m', '* * * *'])('refuses the schedule %j at /trigger/schedule', (schedule) => {
      const errors = crossFieldErrors(rule(cron(schedule)));
      expect(errors.map((e) => e.path)).toEqual(['/trigger/schedule']);
      expect(errors[0]!.message).toMatch(/^not a valid schedule: /);
    });

    it('says which forms a schedule of the wrong shape may take', () => {
      const forms = 'write 5 fields (minute hour day-of-month month day-of-week), 6 with seconds first, 7 with seconds first and a year last, or a nickname: @yearly, @annually, @monthly, @weekly, @daily, @midnight, @hourly';
      expect(crossFieldErrors(rule(cron('* * * *')))[0]!.message).toBe(`not a valid schedule: it has 4 fields; ${forms}`);
      expect(crossFieldErrors(rule(cron('@every 5m')))[0]!.message).toBe(`not a valid schedule: "@every 5m" is not a nickname croner knows; ${forms}`);
    });

    // Issue 36: `0 0 31 2 *` reads well, and a rule saved with it would never run.
    const now = Date.parse('2026-05-01T00:00:00Z');
    it.each([['0 0 31 2 *', 'UTC'], ['0 0 30 2 *', 'Europe/Paris'], ['0 0 31 4,6,9,11 *', 'UTC'], ['0 0 0 1 1 * 2025', 'UTC']])('refuses %j in %s, which never fires', (schedule, timezone) => {
      expect(crossFieldErrors(rule(cron(schedule, timezone)), { firesAfter: now })).toEqual([
        { path: '/trigger/schedule', message: expect.stringMatching(new RegExp(`^never fires: no moment from now on matches "${schedule.replaceAll('*', '\\*')}" in ${timezone} `)) },
      ]);
    });

    it.each(['0 0 29 2 *', '0 0 0 1 1 * 2027', '@yearly', '0 0 L 2 *'])('accepts %j, which fires again', (schedule) => {
      expect(crossFieldErrors(rule(cron(schedule)), { firesAfter: now })).toEqual([]);
    });

    it('asks nothing of a stored schedule unless told when it must fire after', () => {
      expect(crossFieldErrors(rule(cron('0 0 31 2 *')))).toEqual([]);
    });

    it.each(['Mars/Olympus', 'UTC+25', 'europe/nowhere'])('refuses the time zone %j at /trigger/timezone', (timezone) => {
      const errors = crossFieldErrors(rule(cron('*/5 * * * *', timezone)));
      expect(errors.map((e) => e.path)).toEqual(['/trigger/timezone']);
      expect(errors[0]!.message).toContain(timezone);
    });

    it('reports a bad schedule and a bad time zone each at its own field', () => {
      expect(paths(rule(cron('nope', 'Mars/Olympus')))).toEqual(['/trigger/schedule', '/trigger/timezone'].sort());
    });

    it('refuses trigger_host: a schedule carries no host', () => {
      const errors = crossFieldErrors(rule({ ...cron('*/5 * * * *'), target: TARGETS.trigger_host }));
      expect(errors).toEqual([{ path: '/target/type', message: expect.stringMatching(/cron trigger carries no host/) }]);
    });
  });

  it('reports every problem at once', () => {
    const input = rule({
      trigger: { type: 'cron', schedule: 'nope' },
      action: ACTIONS.cloud,
      target: { type: 'trigger_host', tags: ['x'] },
      infrastructureType: 'On_Premise',
    });
    expect(paths(input).sort()).toEqual(['/action/instances', '/infrastructureType', '/target/tags', '/trigger/schedule']);
  });

  it('lets a scheduled cloud action that names its instances, or finds them by tag, leave its target alone', () => {
    const cron = { type: 'cron' as const, schedule: '0 19 * * 1-5' };
    const named = (instances: object) => paths(rule({ trigger: cron, action: { ...ACTIONS.cloud, instances } as never, target: { type: 'trigger_host' }, infrastructureType: 'CLOUD_EC2' }));
    expect(named({ ids: ['i-0123456789abcdef0'] })).toEqual([]);
    expect(named({ tags: { env: 'dev' } })).toEqual([]);
    expect(named({ from: 'payload' })).toEqual(['/action/instances']);
    expect(paths(rule({ trigger: cron, action: ACTIONS.cloud, target: { type: 'specific_tags', tags: ['db'] }, infrastructureType: 'CLOUD_EC2' }))).toEqual([]);
  });
});

describe('an alert trigger', () => {
  it('refuses an alarmName regular expression that does not compile, at its field', () => {
    const errors = crossFieldErrors(rule({ trigger: { type: 'alert', integrationId: '01900000-0000-7000-8000-000000000000', alarmName: '/disk_(full/' } }));
    expect(errors).toEqual([{ path: '/trigger/alarmName', message: expect.stringMatching(/^not a valid regular expression: .*write a glob such as "disk_\*"/) }]);
    expect(crossFieldErrors(rule({ trigger: { type: 'alert', integrationId: '01900000-0000-7000-8000-000000000000', alarmName: 'disk_(full' } }))).toEqual([]);
  });
});
