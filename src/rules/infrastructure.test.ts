import { describe, expect, it } from 'vitest';
import { spelledInfrastructureType, withInfrastructureType } from './infrastructure.js';
import type { RuleBody } from './schema.js';

describe('infrastructure types', () => {
  it.each([
    ['on_premise', 'On_Premise'], ['ON_PREMISE', 'On_Premise'], ['On_Premise', 'On_Premise'],
    ['cloud_ec2', 'CLOUD_EC2'], ['Cloud_Azure', 'CLOUD_AZURE'], ['cloud_gcp', 'CLOUD_GCP'], ['cloud_openstack', 'CLOUD_OPENSTACK'],
  ])('reads %j as %j', (sent, stored) => {
    expect(spelledInfrastructureType(sent)).toBe(stored);
  });

  it.each(['AWS', 'on-premise', '', 3, null])('leaves %j for the schema to refuse', (sent) => {
    expect(spelledInfrastructureType(sent)).toBe(sent);
  });

  const body = (action: RuleBody['action'], infrastructureType?: RuleBody['infrastructureType']): RuleBody => ({
    name: 'r', trigger: { type: 'webhook' }, action, target: { type: 'trigger_host' }, ...(infrastructureType ? { infrastructureType } : {}),
  });
  const script: RuleBody['action'] = { type: 'script', flavour: 'autofix', runbook: { script: 'true' } };
  const cloud: RuleBody['action'] = { type: 'cloud', operation: 'reboot' };

  it('is On_Premise unless the rule says otherwise, except for a cloud action, which must name its cloud', () => {
    expect(withInfrastructureType(body(script)).infrastructureType).toBe('On_Premise');
    expect(withInfrastructureType(body({ type: 'email_runbook', runbook: { notes: 'x' } })).infrastructureType).toBe('On_Premise');
    expect(withInfrastructureType(body(script, 'CLOUD_GCP')).infrastructureType).toBe('CLOUD_GCP');
    expect(withInfrastructureType(body(cloud)).infrastructureType).toBeUndefined();
    expect(withInfrastructureType(body(cloud, 'CLOUD_EC2')).infrastructureType).toBe('CLOUD_EC2');
  });
});
