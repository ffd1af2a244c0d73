import { describe, expect, it } from 'vitest';
import type { AlertFacts, AlertTrigger } from '../engine/alert-match.js';
import { noHostReason } from './rule-host.js';

const trigger: AlertTrigger = { type: 'alert', integrationId: '01900000-0000-7000-8000-000000000000' };
const facts = (labels: Record<string, string>, hostLabel?: string): AlertFacts => ({ alarmName: 'DiskFull', severity: undefined, state: 'firing', labels, hostName: undefined, hostLabel });

describe('noHostReason', () => {
  it('names the label the tool reads, or says it is empty', () => {
    expect(noHostReason(trigger, facts({ alertname: 'DiskFull' }, 'instance'))).toMatch(/^the alert has no "instance" label, which names the host \(the integration's config.hostLabel; its labels are "alertname"\)/);
    expect(noHostReason(trigger, facts({ instance: '' }, 'instance'))).toMatch(/^the alert has an empty "instance" label/);
  });

  it("names the rule's own label before the tool's", () => {
    expect(noHostReason({ ...trigger, hostLabel: 'node' }, facts({}, 'instance'))).toBe(
      'the alert has no "node" label, which the rule\'s trigger.hostLabel names as the host\'s (it carries no label): set trigger.hostLabel to the label that names the host, or add "node" to the alert',
    );
  });

  it('lists a dozen labels at most, for a tool that reads no label', () => {
    const labels = Object.fromEntries(Array.from({ length: 15 }, (_, i) => [`l${i}`, 'x']));
    expect(noHostReason(trigger, facts(labels))).toBe(
      `the alert names no host (its labels are ${Array.from({ length: 12 }, (_, i) => `"l${i}"`).join(', ')} and 3 more): set the rule's trigger.hostLabel to the label that names the host`,
    );
  });
});
