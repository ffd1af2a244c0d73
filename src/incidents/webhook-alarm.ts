import { hash } from 'node:crypto';
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

/**
 * A monitoring tool repeats the same few alarms on the same hosts: their keys are kept, so a storm
 * of calls pays for one hash each, not one per call (the hash was 3.4 % of the ingest benchmark's
 * CPU, bench/README.md), found by the names as sent, so a kept one costs two lookups and no string
 * built. Bounded: emptied when full, and long names are hashed every time.
 */
const KEPT_KEYS = 4096;
const MAX_KEPT_NAMES_LENGTH = 512;
const keptKeys = new Map<string, Map<string, string>>();
let keptCount = 0;

/** `webhook:` and the SHA-256 of the alarm's name and the host's key: of bounded length whatever the names. */
export function webhookIncidentKey(alarmName: string, hostname: string): string {
  if (alarmName.length + hostname.length > MAX_KEPT_NAMES_LENGTH) return keyOf(alarmName, hostname);
  let byHost = keptKeys.get(alarmName);
  let key = byHost?.get(hostname);
  if (key !== undefined) return key;
  if (keptCount >= KEPT_KEYS) {
    keptKeys.clear();
    keptCount = 0;
    byHost = undefined;
  }
  if (byHost === undefined) keptKeys.set(alarmName, (byHost = new Map()));
  key = keyOf(alarmName, hostname);
  byHost.set(hostname, key);
  keptCount += 1;
  return key;
}

function keyOf(alarmName: string, hostname: string): string {
  return `webhook:${hash('sha256', JSON.stringify([alarmName, hostKey(hostname)]), 'hex')}`;
}
