import { createHash } from 'node:crypto';
import { hostKey } from '../engine/decide.js';
import type { Sighting } from './book.js';

/** What a webhook call's body says, as far as its incident goes (ingress/payload.ts reads it). */
export interface WebhookAlarmFields {
  alarmName: string | undefined;
  hostName: string | undefined;
  severity: string | undefined;
  alarmState: 'firing' | 'resolved' | undefined;
}

/**
 * The alarm a webhook call names (DESIGN.md §3: AlarmName and HostName), when it names both: an
 * incident without an integration, keyed by the alarm's name and the host's (without case). Every
 * call is an occurrence; the incident closes after the tenant's quiet period without another call,
 * or when a call says `State: resolved` (docs/incidents.md).
 */
export function webhookAlarm(payload: WebhookAlarmFields): Omit<Sighting, 'tenantId' | 'receivedAt'> | undefined {
  const alarmName = payload.alarmName?.trim();
  const hostname = payload.hostName?.trim();
  if (!alarmName || !hostname) return undefined;
  return {
    integrationId: null,
    observation: {
      incidentKey: webhookIncidentKey(alarmName, hostname),
      alarmName,
      hostname,
      severity: payload.severity ?? null,
      state: payload.alarmState === 'resolved' ? 'resolved' : 'firing',
      at: null,
    },
    repeat: { by: 'call' },
  };
}

/** `webhook:` and the SHA-256 of the alarm's name and the host's key: of bounded length whatever the names. */
export function webhookIncidentKey(alarmName: string, hostname: string): string {
  return `webhook:${createHash('sha256').update(JSON.stringify([alarmName, hostKey(hostname)])).digest('hex')}`;
}
