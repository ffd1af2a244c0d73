import { describe, expect, it } from 'vitest';
import type { Rule } from '../../api/types';
import { placeFieldErrors } from '../../api/problem';
import { emptyForm, formFieldOf, formFromRule, stepErrors, stepOf, toRuleInput } from './form';

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
    expect(formFromRule({ action: { type: 'cloud', operation: 'reboot' }, target: { type: 'trigger_host' } } as unknown as Rule)).toBeNull();
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
    expect(stepErrors('runbook', { ...emptyForm(), script: '  ', timeoutSeconds: '1.5' })).toEqual({ script: 'write the script to run', timeoutSeconds: 'enter a whole number' });
    expect(stepErrors('limit', { ...emptyForm(), limitEnabled: true, limitMax: '0' })).toEqual({ limitMax: 'must be from 1 to 100000' });
    expect(stepErrors('flapping', { ...emptyForm(), flappingMaxEvents: 'x' })).toEqual({});
    expect(stepErrors('flapping', { ...emptyForm(), flappingEnabled: true, flappingMaxStateChanges: '0' })).toEqual({ flappingMaxStateChanges: 'must be from 1 to 100000' });
    const fanOut = { ...emptyForm(), targetType: 'specific_tags' as const, tags: ['web'] };
    expect(stepErrors('target', { ...fanOut, maxConcurrency: '', maxErrors: '' })).toEqual({});
    expect(stepErrors('target', { ...fanOut, maxConcurrency: '0', maxErrors: 'many' })).toEqual({ maxConcurrency: 'must be from 1 to 10000', maxErrors: 'enter a whole number' });
  });
});
