import type { Kysely } from 'kysely';
import type { Database } from '../store/schema.js';

/** How long the last alert's time may wait before it is written. */
export const STAMP_FLUSH_MS = 1000;

/**
 * The time each integration last took an alert, as people see it on the integration. Written at
 * most once a second for all of them together, not per notification: on SQLite each of those was a
 * commit of its own, synced on the event loop (~5.6 ms each under a tool's steady stream, found by
 * a SQL timer in bench/alerts.js), for a field nobody needs to the millisecond. A crash loses at
 * most the last second of it; the alerts themselves are in the ingest's own commit.
 */
export class DeliveryStamps {
  private readonly pending = new Map<string, number>();
  private timer: NodeJS.Timeout | undefined;
  private flushing: Promise<void> = Promise.resolve();

  constructor(
    private readonly db: Kysely<Database>,
    private readonly flushMs = STAMP_FLUSH_MS,
  ) {}

  took(integrationId: string, at: number): void {
    this.pending.set(integrationId, Math.max(at, this.pending.get(integrationId) ?? 0));
    this.timer ??= setTimeout(() => void this.flush(), this.flushMs).unref();
  }

  /** Writes what waits now; the service's stop calls it so that nothing taken is left unwritten. */
  flush(): Promise<void> {
    clearTimeout(this.timer);
    this.timer = undefined;
    const stamps = [...this.pending];
    this.pending.clear();
    if (stamps.length === 0) return this.flushing;
    this.flushing = this.flushing.then(() => this.db.transaction().execute(async (tx) => {
      for (const [id, at] of stamps) await tx.updateTable('integrations').set({ last_alert_at: at }).where('id', '=', id).execute();
    })).catch(() => {
      // The next alert stamps it again; a status field is not worth failing anything for.
      for (const [id, at] of stamps) if (!this.pending.has(id)) this.pending.set(id, at);
    });
    return this.flushing;
  }
}
