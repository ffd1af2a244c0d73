import type { Kysely } from 'kysely';
import { decide, type Outcome } from '../engine/decide.js';
import type { AlertPayload } from '../ingress/payload.js';
import type { Metrics } from '../metrics/registry.js';
import { newId } from '../store/ids.js';
import type { Database, NewEventRow } from '../store/schema.js';

/** One webhook call, authenticated from the cache, waiting to become an event. */
export interface Submission {
  keyId: string;
  tenantId: string;
  triggerId: string;
  receivedAt: number;
  sourceIp: string;
  payload: AlertPayload;
}

export type SubmissionResult =
  | { status: 'stored'; eventId: string; outcome: Outcome; reason: string | null }
  | { status: 'revoked_key' }
  | { status: 'no_trigger' };

export class IngestOverloadedError extends Error {}

interface Pending {
  submission: Submission;
  resolve(result: SubmissionResult): void;
  reject(error: unknown): void;
}

const KEY_LAST_USED_RESOLUTION_MS = 60_000;

/**
 * Group commit: submissions that arrive while a transaction is running are stored together in the
 * next one, so one disk sync serves many events. Each transaction re-reads the keys and rules it
 * depends on, which makes revocation and rule changes exact whatever any cache holds.
 * A submission's promise settles only after its transaction committed.
 */
export class EventWriter {
  private queue: Pending[] = [];
  private flushing = false;
  private scheduled = false;
  private idle: Array<() => void> = [];

  constructor(
    private readonly db: Kysely<Database>,
    private readonly metrics: Metrics,
    private readonly limits: { maxBatch: number; maxQueued: number },
  ) {}

  submit(submission: Submission): Promise<SubmissionResult> {
    if (this.queue.length >= this.limits.maxQueued) {
      return Promise.reject(new IngestOverloadedError(`ingest queue is full (${this.limits.maxQueued} events waiting for storage)`));
    }
    return new Promise((resolve, reject) => {
      this.queue.push({ submission, resolve, reject });
      this.schedule();
    });
  }

  /** Resolves once everything submitted so far is committed or failed. */
  drain(): Promise<void> {
    if (!this.flushing && !this.scheduled && this.queue.length === 0) return Promise.resolve();
    return new Promise((resolve) => this.idle.push(resolve));
  }

  private schedule(): void {
    if (this.flushing || this.scheduled) return;
    this.scheduled = true;
    // setImmediate lets every request parsed in this turn of the event loop join the batch.
    setImmediate(() => {
      this.scheduled = false;
      void this.flush();
    });
  }

  private async flush(): Promise<void> {
    this.flushing = true;
    while (this.queue.length > 0) {
      const batch = this.queue.splice(0, this.limits.maxBatch);
      const started = performance.now();
      try {
        const results = await this.commit(batch.map((p) => p.submission));
        batch.forEach((pending, i) => pending.resolve(results[i]!));
        this.metrics.ingestBatchSize.observe(batch.length);
        this.metrics.ingestCommitSeconds.observe((performance.now() - started) / 1000);
      } catch (error) {
        for (const pending of batch) pending.reject(error);
      }
    }
    this.flushing = false;
    for (const resolve of this.idle.splice(0)) resolve();
  }

  private async commit(batch: Submission[]): Promise<SubmissionResult[]> {
    return this.db.transaction().execute(async (tx) => {
      const keyIds = [...new Set(batch.map((s) => s.keyId))];
      const triggerIds = [...new Set(batch.map((s) => s.triggerId))];
      const keys = await tx
        .selectFrom('api_keys')
        .select(['id', 'last_used_at'])
        .where('id', 'in', keyIds)
        .where('revoked_at', 'is', null)
        .execute();
      const rules = await tx
        .selectFrom('rules')
        .select(['id', 'tenant_id', 'trigger_id', 'enabled'])
        .where('trigger_id', 'in', triggerIds)
        .where('deleted_at', 'is', null)
        .execute();
      const activeKeys = new Set(keys.map((k) => k.id));
      const rulesByTrigger = new Map(rules.map((r) => [r.trigger_id, r]));

      const rows: NewEventRow[] = [];
      const results = batch.map((s): SubmissionResult => {
        if (!activeKeys.has(s.keyId)) return { status: 'revoked_key' };
        const rule = rulesByTrigger.get(s.triggerId);
        if (!rule || rule.tenant_id !== s.tenantId) return { status: 'no_trigger' };
        const decision = decide({ enabled: rule.enabled === 1 }, { act: s.payload.act });
        const row = eventRow(s, rule.id, decision.outcome, decision.reason);
        rows.push(row);
        return { status: 'stored', eventId: row.id, outcome: decision.outcome, reason: decision.reason };
      });

      if (rows.length > 0) await tx.insertInto('events').values(rows).execute();
      const now = Date.now();
      const stale = keys.filter((k) => k.last_used_at === null || now - k.last_used_at > KEY_LAST_USED_RESOLUTION_MS).map((k) => k.id);
      if (stale.length > 0) await tx.updateTable('api_keys').set({ last_used_at: now }).where('id', 'in', stale).execute();
      return results;
    }).then((results) => {
      for (const r of results) if (r.status === 'stored') this.metrics.events.inc({ outcome: r.outcome });
      return results;
    });
  }
}

function eventRow(s: Submission, ruleId: string, outcome: Outcome, reason: string | null): NewEventRow {
  return {
    id: newId(s.receivedAt),
    tenant_id: s.tenantId,
    rule_id: ruleId,
    api_key_id: s.keyId,
    outcome,
    reason,
    received_at: s.receivedAt,
    source_ip: s.sourceIp,
    payload: JSON.stringify(s.payload.raw),
    env: JSON.stringify(s.payload.env),
    skipped_env: JSON.stringify(s.payload.skippedEnv),
  };
}
