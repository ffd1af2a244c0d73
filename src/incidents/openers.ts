import { IDEMPOTENCY_TTL_MS, type StoredOutcome } from '../engine/decide.js';
import type { IncidentRow } from '../store/schema.js';
import { scopeOf } from './book.js';

/**
 * A new alarm's notification is kept by the incident it opens (`opened_by`, migration 0042): its
 * fingerprint and each rule's event, what an idempotency key per rule kept before (a row and four
 * b-tree entries per alert: ~11 µs of the ingest's CPU per new alarm, bench/README.md). A re-send
 * of it within 24 h finds its incident among those the ingest reads anyway (open, or resolved
 * lately) and is recorded as a duplicate of the same event, as the key made it.
 */

/** A rule's event of the notification: [rule id, event id, outcome]. */
export type OpenerEvent = readonly [string, string, StoredOutcome];

/**
 * How long before its receipt an alert may say its alarm began and still be kept by its incident
 * instead of by keys: the incident is then resolved at or after that time, and the ingest reads
 * incidents resolved this much longer than REPEAT_WINDOW_MS, so a re-send within 24 h of the
 * alert's receipt finds it (reads.ts). An alert later than that (a backlog) keeps its keys.
 */
export const OPENER_SLACK_MS = 3_600_000;

/** `at`: when pitcrew received it; a re-send tells it for IDEMPOTENCY_TTL_MS after, as a key would. */
export function openerJson(fingerprint: string, at: number, events: readonly OpenerEvent[]): string {
  return JSON.stringify({ fingerprint, at, events });
}

/** The events of the notifications that opened a batch's incidents, by alarm and fingerprint. */
export class Openers {
  private readonly byScope = new Map<string, string[]>();

  constructor(
    rows: readonly IncidentRow[],
    /** When a batch's alerts came: an opener received IDEMPOTENCY_TTL_MS before is no longer their original. */
    private readonly now: number,
  ) {
    for (const row of rows) {
      if (row.opened_by === null) continue;
      const scope = scopeOf(row.tenant_id, row.integration_id, row.incident_key);
      this.byScope.set(scope, [...(this.byScope.get(scope) ?? []), row.opened_by]);
    }
  }

  /** The events of the notification with this fingerprint that opened an incident of the alarm, if one did. */
  of(tenantId: string, integrationId: string | null, incidentKey: string, fingerprint: string): readonly OpenerEvent[] | undefined {
    // Parsed only for a re-send: a re-firing's incident is read every batch, its opener seldom wanted.
    const head = `{"fingerprint":${JSON.stringify(fingerprint)},`;
    const json = this.byScope.get(scopeOf(tenantId, integrationId, incidentKey))?.find((text) => text.startsWith(head));
    if (json === undefined) return undefined;
    const { at, events } = JSON.parse(json) as { at: number; events: OpenerEvent[] };
    return at > this.now - IDEMPOTENCY_TTL_MS ? events : undefined;
  }
}
