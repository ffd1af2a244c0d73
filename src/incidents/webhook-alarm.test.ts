import { createHash } from 'node:crypto';
import { describe, expect, it } from 'vitest';
import { webhookIncidentKey } from './webhook-alarm.js';

const expected = (alarmName: string, hostKey: string) => `webhook:${createHash('sha256').update(JSON.stringify([alarmName, hostKey])).digest('hex')}`;

describe('webhookIncidentKey', () => {
  it("is the SHA-256 of the alarm's name and the host's key, the same on every call", () => {
    for (let i = 0; i < 3; i++) expect(webhookIncidentKey('disk_full', 'WEB-1')).toBe(expected('disk_full', 'web-1'));
    expect(webhookIncidentKey('disk_full', 'web-2')).toBe(expected('disk_full', 'web-2'));
    expect(webhookIncidentKey('disk_full', 'web-2')).not.toBe(webhookIncidentKey('disk_ful', 'lweb-2'));
  });

  it('stays right for long names and past the number of keys it keeps', () => {
    const long = 'a'.repeat(2000);
    expect(webhookIncidentKey(long, 'web-1')).toBe(expected(long, 'web-1'));
    for (let i = 0; i < 5000; i++) webhookIncidentKey(`alarm-${i}`, 'web-1');
    expect(webhookIncidentKey('alarm-1', 'web-1')).toBe(expected('alarm-1', 'web-1'));
    expect(webhookIncidentKey('alarm-4999', 'web-1')).toBe(expected('alarm-4999', 'web-1'));
  });
});
