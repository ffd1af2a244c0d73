import { describe, expect, it } from 'vitest';
import type { Rule } from '../../api/types';
import { placeFieldErrors } from '../../api/problem';
import { emptyForm, formFieldOf, formFromRule, SAMPLE_SCRIPT, sampleScriptFor, SCHEDULE_SAMPLE_SCRIPT, stepErrors, stepOf, STEPS, stepTitle, toRuleInput, type RuleForm } from './form';

describe('the rule wizard form', () => {
  it('sends a webhook script rule with the defaults a person left alone', () => {
    const input = toRuleInput({ ...emptyForm(), name: '  restart nginx ', script: 'systemctl restart nginx' });
    expect(input).toEqual({
      name: 'restart nginx',
      enabled: true,
      trigger: { type: 'webhook' },
      action: { type: 'script', flavour: 'autofix', runbook: { script: 'systemctl restart nginx', interpreter: 'sh' }, timeoutSeconds: 300 },
      target: { type: 'trigger_host' },
      infrastructureType: 'On_Premise',
      actionLimit: null,
      flapping: { enabled: false },
    });
  });

  it('sends only the fields of the chosen target, limit and flapping', () => {
    const form = { ...emptyForm(), name: 'r', targetType: 'specific_tags' as const, tags: ['web', 'eu'], hostname: 'left-over', limitEnabled: true, flappingEnabled: true };
    const input = toRuleInput(form);
    expect(input.target).toEqual({ type: 'specific_tags', tags: ['web', 'eu'] });
    expect(input.actionLimit).toEqual({ max: 3, windowSeconds: 3600, onLimit: 'escalate' });
    expect(input.flapping).toEqual({ enabled: true, maxEvents: 5, windowSeconds: 300, cooldownSeconds: 600, maxStateChanges: 3 });
  });

  it('sends the fan-out settings of a tag target only when given, and never for other targets', () => {
    const tags = { ...emptyForm(), name: 'r', targetType: 'specific_tags' as const, tags: ['web'], maxConcurrency: ' 2 ', maxErrors: '' };
    expect(toRuleInput(tags).target).toEqual({ type: 'specific_tags', tags: ['web'], maxConcurrency: 2 });
    expect(toRuleInput({ ...tags, maxErrors: '1' }).target).toEqual({ type: 'specific_tags', tags: ['web'], maxConcurrency: 2, maxErrors: 1 });
    expect(toRuleInput({ ...tags, targetType: 'trigger_host' }).target).toEqual({ type: 'trigger_host' });
  });

  it('round-trips a stored rule, keeping its trigger but not its webhook URL', () => {
    const rule = {
      id: 'r1', name: 'disk', enabled: false,
      trigger: { type: 'webhook', triggerId: 't', webhookUrl: 'http://x', curl: 'curl' },
      action: { type: 'script', flavour: 'diagnostics', runbook: { script: 'df -h', interpreter: 'bash', notes: 'n' }, timeoutSeconds: 60 },
      target: { type: 'specific_tags', tags: ['db'], maxConcurrency: 1, maxErrors: 2 },
      infrastructureType: 'CLOUD_EC2',
      actionLimit: { max: 2, windowSeconds: 600, onLimit: 'drop' },
      flapping: { enabled: true, maxEvents: 4, windowSeconds: 60, cooldownSeconds: 0, maxStateChanges: 7 },
    } as unknown as Rule;
    const input = toRuleInput(formFromRule(rule)!);
    expect(input).toEqual({
      name: 'disk', enabled: false, trigger: { type: 'webhook' },
      action: rule.action, target: rule.target, infrastructureType: 'CLOUD_EC2', actionLimit: rule.actionLimit, flapping: rule.flapping,
    });
  });

  it('does not edit kinds it cannot show', () => {
    const rule = { action: { type: 'email_runbook', runbook: { notes: 'x' } }, target: { type: 'cli_machine' } } as unknown as Rule;
    expect(formFromRule(rule)).toBeNull();
  });

  it('edits a CLI runbook on the CLI Machine, its credentials and a limit that never escalates', () => {
    const rule = {
      id: 'r1', name: 'scale', enabled: true, trigger: { type: 'cron', schedule: '*/5 * * * *', timezone: 'UTC', overlap: 'skip' },
      action: { type: 'cli', runbook: { script: 'aws sts get-caller-identity', interpreter: 'bash' }, credentialIds: ['c-aws'], timeoutSeconds: 60 },
      target: { type: 'cli_machine' }, infrastructureType: 'CLOUD_EC2', actionLimit: { max: 2, windowSeconds: 600, onLimit: 'escalate' },
      flapping: { enabled: false, maxEvents: 5, windowSeconds: 300, cooldownSeconds: 600, maxStateChanges: 3 },
    } as unknown as Rule;
    const form = formFromRule(rule)!;
    expect(form).toMatchObject({ actionType: 'cli', credentialIds: ['c-aws'], interpreter: 'bash' });
    expect(stepTitle(STEPS[3], form)).toBe('CLI runbook');
    expect(stepErrors('target', form)).toEqual({});
    expect(toRuleInput(form)).toMatchObject({ action: rule.action, target: { type: 'cli_machine' }, actionLimit: { max: 2, windowSeconds: 600 } });
    expect(toRuleInput(form).actionLimit).not.toHaveProperty('onLimit');
    expect(formFieldOf('/body/action/credentialIds/0', 'cli')).toBe('credentialIds');
  });

  it('places the service field errors at the wizard fields, and keeps the rest for a banner', () => {
    const { errors, unplaced } = placeFieldErrors([
      { path: '/body/name', message: 'already used by another rule' },
      { path: '/body/target/tags/0', message: 'must match pattern' },
      { path: '/body/target/type', message: 'a script action cannot target cli_machine' },
      { path: '/body/actionLimit/windowSeconds', message: 'must be >= 1' },
      { path: '/body/target/maxErrors', message: 'must be >= 1' },
      { path: '/body/flapping/maxStateChanges', message: 'must be integer' },
      { path: '/body/surprise', message: 'is not a known field' },
    ], formFieldOf);
    expect(errors).toEqual({
      name: 'already used by another rule', tags: 'must match pattern', targetType: 'a script action cannot target cli_machine',
      limitWindowSeconds: 'must be >= 1', maxErrors: 'must be >= 1', flappingMaxStateChanges: 'must be integer',
    });
    expect(unplaced).toEqual([{ path: '/body/surprise', message: 'is not a known field' }]);
    expect(stepOf('tags')).toBe('target');
    expect(stepOf('limitWindowSeconds')).toBe('limit');
    expect(stepOf('maxConcurrency')).toBe('target');
    expect(stepOf('flappingMaxStateChanges')).toBe('flapping');
  });

  it('checks each step before moving on', () => {
    expect(stepErrors('trigger', emptyForm())).toEqual({ name: expect.stringMatching(/name/) });
    expect(stepErrors('trigger', { ...emptyForm(), name: 'disk', trigger: { type: 'alert' } })).toEqual({ trigger: 'choose the integration whose alerts raise the rule' });
    const alert = { type: 'alert' as const, integrationId: 'i-1', alarmName: 'Disk*', on: 'both' as const };
    expect(stepErrors('trigger', { ...emptyForm(), name: 'disk', trigger: alert })).toEqual({});
    expect(toRuleInput({ ...emptyForm(), name: 'disk', trigger: alert }).trigger).toEqual(alert);
    expect(stepErrors('target', { ...emptyForm(), targetType: 'specific_host' })).toEqual({ hostname: 'pick the host to act on' });
    expect(stepErrors('target', { ...emptyForm(), targetType: 'specific_tags' })).toEqual({ tags: expect.stringMatching(/at least one tag/) });
    expect(stepErrors('action', { ...emptyForm(), script: '  ', timeoutSeconds: '1.5' })).toEqual({ script: 'write the script to run', timeoutSeconds: 'enter a whole number' });
    expect(stepErrors('limit', { ...emptyForm(), limitEnabled: true, limitMax: '0' })).toEqual({ limitMax: 'must be from 1 to 100000' });
    expect(stepErrors('flapping', { ...emptyForm(), flappingMaxEvents: 'x' })).toEqual({});
    expect(stepErrors('flapping', { ...emptyForm(), flappingEnabled: true, flappingMaxStateChanges: '0' })).toEqual({ flappingMaxStateChanges: 'must be from 1 to 100000' });
    const fanOut = { ...emptyForm(), targetType: 'specific_tags' as const, tags: ['web'] };
    expect(stepErrors('target', { ...fanOut, maxConcurrency: '', maxErrors: '' })).toEqual({});
    expect(stepErrors('target', { ...fanOut, maxConcurrency: '0', maxErrors: 'many' })).toEqual({ maxConcurrency: 'must be from 1 to 10000', maxErrors: 'enter a whole number' });
  });

  describe('a cloud action', () => {
    const cloud = (patch: Partial<RuleForm> = {}): RuleForm => ({
      ...emptyForm(), name: 'reboot hung', infrastructureType: 'CLOUD_EC2', actionType: 'cloud', region: ' eu-west-1 ', credentialId: 'c1', ...patch,
    });

    it('sends the provider of the infrastructure type, the instance from the payload by default, and no host target', () => {
      const input = toRuleInput(cloud({ limitEnabled: true }));
      expect(input).toMatchObject({
        action: { type: 'cloud', provider: 'aws', operation: 'reboot', region: 'eu-west-1', credentialId: 'c1', instances: { from: 'payload', field: 'InstanceId' }, timeoutSeconds: 300 },
        target: { type: 'trigger_host' }, infrastructureType: 'CLOUD_EC2',
        // Past its limit a cloud action is recorded, never escalated: no onLimit.
        actionLimit: { max: 3, windowSeconds: 3600 },
      });
      expect(input.action).not.toHaveProperty('confirmTerminate');
      expect(toRuleInput(cloud({ instancesFrom: 'ids', instanceIds: 'i-0000000a, i-0000000b\ni-0000000a' })).action).toMatchObject({ instances: { ids: ['i-0000000a', 'i-0000000b'] } });
      expect(toRuleInput(cloud({ instancesFrom: 'tags', instanceTags: 'env = prod\n\nrole=web=1' })).action).toMatchObject({ instances: { tags: { env: 'prod', role: 'web=1' } } });
      expect(toRuleInput(cloud({ operation: 'terminate', confirmTerminate: true })).action).toMatchObject({ operation: 'terminate', confirmTerminate: true });
      expect(toRuleInput(cloud({ instancesFrom: 'tags', instanceTags: 'env=prod', instancesAtOnce: '2', failedInstances: ' 1 ' })).action).toMatchObject({ maxConcurrency: 2, maxErrors: 1 });
      expect(toRuleInput(cloud()).action).not.toHaveProperty('maxConcurrency');
      expect(toRuleInput(cloud({ infrastructureType: 'CLOUD_AZURE', region: '' })).action).toMatchObject({ provider: 'azure' });
      expect(toRuleInput(cloud({ infrastructureType: 'CLOUD_AZURE', region: '' })).action).not.toHaveProperty('region');
    });

    it('checks the credential, the region of AWS, the instances, the confirmation of terminate and the wait', () => {
      expect(stepErrors('action', cloud())).toEqual({});
      expect(stepErrors('action', cloud({ credentialId: '', region: '', timeoutSeconds: '5' }))).toEqual({
        credentialId: 'pick the credential the action acts with', region: 'enter the region of the instances, e.g. eu-west-1', timeoutSeconds: 'must be from 10 to 3600',
      });
      expect(stepErrors('action', cloud({ region: 'Ireland' }))).toEqual({ region: '“Ireland” is not an AWS region name such as eu-west-1' });
      expect(stepErrors('action', cloud({ infrastructureType: 'CLOUD_GCP', region: '' }))).toEqual({});
      expect(stepErrors('action', cloud({ instanceField: ' ' }))).toEqual({ instanceField: expect.stringMatching(/payload field/) });
      expect(stepErrors('action', cloud({ instancesFrom: 'ids', instanceIds: '' }))).toEqual({ instanceIds: 'list at least one instance id' });
      expect(stepErrors('action', cloud({ instancesFrom: 'ids', instanceIds: 'i-0000000a web-1' }))).toEqual({ instanceIds: expect.stringMatching(/“web-1” is not an EC2 instance id/) });
      expect(stepErrors('action', cloud({ instancesFrom: 'tags', instanceTags: '' }))).toEqual({ instanceTags: 'enter at least one tag, name=value, e.g. env=prod' });
      expect(stepErrors('action', cloud({ instancesFrom: 'tags', instanceTags: 'env=prod\nweb' }))).toEqual({ instanceTags: '“web” is not name=value' });
      expect(stepErrors('action', cloud({ instancesFrom: 'tags', instanceTags: Array.from({ length: 11 }, (_, i) => `t${i}=x`).join('\n') }))).toEqual({ instanceTags: 'at most 10 tags' });
      expect(stepErrors('action', cloud({ operation: 'terminate' }))).toEqual({ confirmTerminate: expect.stringMatching(/tick the box/) });
      expect(stepErrors('action', cloud({ instancesFrom: 'ids', instanceIds: 'i-0000000a', instancesAtOnce: '0', failedInstances: 'x' }))).toEqual({ instancesAtOnce: expect.any(String), failedInstances: expect.any(String) });
      // A host target is not asked for; a schedule's cloud action names its instances or finds them by tag.
      expect(stepErrors('target', cloud({ targetType: 'specific_host' }))).toEqual({});
      expect(stepErrors('target', cloud({ trigger: { type: 'cron' } }))).toEqual({});
      expect(stepErrors('action', cloud({ trigger: { type: 'cron' } }))).toEqual({ instancesFrom: 'a schedule’s tick names no instance: list the instances, or choose them by tag' });
      expect(stepErrors('action', cloud({ trigger: { type: 'cron' }, instancesFrom: 'tags', instanceTags: 'env=dev' }))).toEqual({});
      expect(stepErrors('target', cloud({ infrastructureType: 'On_Premise' }))).toEqual({ actionType: expect.stringMatching(/cloud infrastructure type/) });
    });

    it('round-trips a stored cloud rule, and titles its step', () => {
      const rule = {
        id: 'r3', name: 'reboot', enabled: true, trigger: { type: 'webhook', triggerId: 't' },
        action: { type: 'cloud', provider: 'aws', operation: 'stop', region: 'us-east-1', credentialId: 'c9', instances: { ids: ['i-0000000a'] }, timeoutSeconds: 600 },
        target: { type: 'trigger_host' }, infrastructureType: 'CLOUD_EC2', actionLimit: null,
        flapping: { enabled: false, maxEvents: 5, windowSeconds: 300, cooldownSeconds: 600, maxStateChanges: 3 },
      } as unknown as Rule;
      const form = formFromRule(rule)!;
      expect(form).toMatchObject({ actionType: 'cloud', operation: 'stop', instancesFrom: 'ids', instanceIds: 'i-0000000a', timeoutSeconds: '600' });
      expect(toRuleInput(form).action).toEqual(rule.action);
      expect(stepTitle(STEPS[3], form)).toBe('Cloud action');
      expect(stepTitle(STEPS[3], emptyForm())).toBe('Runbook');
      const payload = formFromRule({ ...rule, action: { type: 'cloud', operation: 'start', region: 'eu-west-1', credentialId: 'c9' } } as unknown as Rule)!;
      expect(payload).toMatchObject({ instancesFrom: 'payload', instanceField: 'InstanceId', timeoutSeconds: '300' });
      const tagged = { ...rule, action: { ...rule.action, instances: { tags: { env: 'dev', team: 'ops' } } } } as unknown as Rule;
      expect(formFromRule(tagged)).toMatchObject({ instancesFrom: 'tags', instanceTags: 'env=dev\nteam=ops' });
      expect(toRuleInput(formFromRule(tagged)!).action).toEqual(tagged.action);
    });

    it('places the service errors at the cloud fields', () => {
      const { errors } = placeFieldErrors([
        { path: '/body/action/credentialId', message: 'no credential c1 in this tenant' },
        { path: '/body/action/region', message: 'an AWS action needs the region' },
        { path: '/body/action/confirmTerminate', message: 'set confirmTerminate' },
        { path: '/body/action/instances/ids/0', message: 'must NOT have fewer than 1 characters' },
        { path: '/body/action/provider', message: 'aws actions belong to CLOUD_EC2' },
        { path: '/body/action/timeoutSeconds', message: 'must be <= 3600' },
      ], (path) => formFieldOf(path, 'cloud'));
      expect(errors).toEqual({
        credentialId: 'no credential c1 in this tenant', region: 'an AWS action needs the region', confirmTerminate: 'set confirmTerminate',
        instanceIds: 'must NOT have fewer than 1 characters', actionType: 'aws actions belong to CLOUD_EC2', timeoutSeconds: 'must be <= 3600',
      });
      expect(formFieldOf('/body/action', 'cloud')).toBe('operation');
      expect(formFieldOf('/body/action', 'script')).toBe('script');
      expect([stepOf('credentialId'), stepOf('confirmTerminate'), stepOf('actionType')]).toEqual(['action', 'action', 'target']);
    });
  });

  describe('a cron rule', () => {
    const cron = (patch: Partial<RuleForm> = {}): RuleForm => ({
      ...emptyForm(), name: 'rotate logs', trigger: { type: 'cron' }, schedule: ' 30 2 * * * ', timezone: 'Europe/Berlin',
      targetType: 'specific_tags', tags: ['web'], ...patch,
    });

    it('starts in the zone of the browser, skipping overlaps, and sends the schedule trimmed', () => {
      expect(emptyForm()).toMatchObject({ schedule: '', timezone: Intl.DateTimeFormat().resolvedOptions().timeZone, overlap: 'skip', pick: undefined });
      const input = toRuleInput(cron({ overlap: 'allow' }));
      expect(input.trigger).toEqual({ type: 'cron', schedule: '30 2 * * *', timezone: 'Europe/Berlin', overlap: 'allow' });
      // One online host of the tags is a cron rule's default: not sent, and no fan-out with it.
      expect(input.target).toEqual({ type: 'specific_tags', tags: ['web'] });
      expect(toRuleInput(cron({ maxConcurrency: '2' })).target).toEqual({ type: 'specific_tags', tags: ['web'] });
    });

    it('leaves an empty zone out (UTC), and sends every host of the tags as a fan-out when chosen', () => {
      expect(toRuleInput(cron({ timezone: '  ' })).trigger).toEqual({ type: 'cron', schedule: '30 2 * * *', overlap: 'skip' });
      expect(toRuleInput(cron({ pick: 'all', maxConcurrency: '2' })).target).toEqual({ type: 'specific_tags', tags: ['web'], pick: 'all', maxConcurrency: 2 });
      // A webhook rule's tags are every host unless it says otherwise.
      expect(toRuleInput(cron({ trigger: { type: 'webhook' }, pick: 'one' })).target).toEqual({ type: 'specific_tags', tags: ['web'], pick: 'one' });
      expect(toRuleInput(cron({ trigger: { type: 'webhook' } })).target).toEqual({ type: 'specific_tags', tags: ['web'] });
    });

    it('round-trips a stored cron rule into editable fields', () => {
      const rule = {
        id: 'r2', name: 'rotate', enabled: true,
        trigger: { type: 'cron', schedule: '*/10 * * * * *', timezone: 'America/New_York', overlap: 'queue' },
        action: { type: 'script', flavour: 'autofix', runbook: { script: 'logrotate', interpreter: 'sh' }, timeoutSeconds: 300 },
        target: { type: 'specific_tags', tags: ['batch'], pick: 'all', maxErrors: 1 },
        infrastructureType: 'On_Premise', actionLimit: null,
        flapping: { enabled: false, maxEvents: 5, windowSeconds: 300, cooldownSeconds: 600, maxStateChanges: 3 },
        schedule: { nextTicks: [], waitingTick: null },
      } as unknown as Rule;
      const form = formFromRule(rule)!;
      expect(form).toMatchObject({ trigger: { type: 'cron' }, schedule: '*/10 * * * * *', timezone: 'America/New_York', overlap: 'queue', pick: 'all' });
      const input = toRuleInput(form);
      expect(input.trigger).toEqual(rule.trigger);
      expect(input.target).toEqual(rule.target);
      // A stored rule without a zone is read in UTC, and says so in the form.
      const utc = formFromRule({ ...rule, trigger: { type: 'cron', schedule: '0 * * * *' } } as Rule)!;
      expect(toRuleInput(utc).trigger).toEqual({ type: 'cron', schedule: '0 * * * *', timezone: 'UTC', overlap: 'skip' });
    });

    it('offers the sample script of a schedule, and never replaces a script someone wrote', () => {
      expect(sampleScriptFor('cron', SAMPLE_SCRIPT)).toBe(SCHEDULE_SAMPLE_SCRIPT);
      expect(sampleScriptFor('webhook', SCHEDULE_SAMPLE_SCRIPT)).toBe(SAMPLE_SCRIPT);
      expect(sampleScriptFor('cron', 'logrotate -f /etc/logrotate.conf')).toBeUndefined();
    });

    it('needs an expression and a target with no trigger host, and places the service errors at the schedule fields', () => {
      expect(stepErrors('trigger', cron({ schedule: ' ' }))).toEqual({ schedule: expect.stringMatching(/cron expression/) });
      expect(stepErrors('trigger', cron())).toEqual({});
      expect(stepErrors('target', cron({ targetType: 'trigger_host' }))).toEqual({ targetType: expect.stringMatching(/a schedule names no host/) });
      expect(stepErrors('target', cron({ maxConcurrency: 'x' }))).toEqual({});
      expect(stepErrors('target', cron({ pick: 'all', maxConcurrency: 'x' }))).toEqual({ maxConcurrency: 'enter a whole number' });
      const { errors } = placeFieldErrors([
        { path: '/body/trigger/schedule', message: 'not a valid schedule: bad' },
        { path: '/body/trigger/timezone', message: 'not a zone' },
        { path: '/body/trigger/overlap', message: 'must be one of' },
        { path: '/body/target/pick', message: 'only with tags' },
      ], formFieldOf);
      expect(errors).toEqual({ schedule: 'not a valid schedule: bad', timezone: 'not a zone', overlap: 'must be one of', pick: 'only with tags' });
      expect([stepOf('schedule'), stepOf('timezone'), stepOf('overlap'), stepOf('pick')]).toEqual(['trigger', 'trigger', 'trigger', 'target']);
    });
  });
});
