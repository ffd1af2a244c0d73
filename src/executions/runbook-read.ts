import type { ExecutionRow } from '../store/schema.js';
import { heldReason } from './fanout.js';
import type { RunbookRecord } from './repository.js';

/** Why a run is held at first: its script is in a git repository (ingest/rows.ts). */
export const AWAITING_RUNBOOK = 'waiting for its runbook to be read from its git repository';

/** A git runbook read for one event's waiting executions (executions/runbook-stage.ts), or why it could not be. */
export type RunbookRead = { script: string; runbook: RunbookRecord } | { failed: string };

type Row = Pick<ExecutionRow, 'id' | 'state' | 'host_id' | 'spec' | 'held' | 'awaiting_runbook' | 'fanout_max_concurrency' | 'queued_at' | 'expires_at'>;

/** What applying a read changes: each row's columns, and the runs now free to dispatch. */
export interface RunbookOutcome {
  updates: Map<string, Partial<ExecutionRow>>;
  released: Row[];
  /** Failed before dispatch: the reason, for the ledger to move them with. */
  failed?: string;
  ids: string[];
}

/**
 * Applies a read to the rows still waiting for it (a repeat, or a race with another node, finds
 * none). Read: each gets the script and the commit it ran at in its spec, and is released as its
 * event's others were at ingest: all of them, or the first maxConcurrency of a fan-out, the rest
 * held for their turn. Failed: they fail before dispatch, with the read's reason. Pure.
 */
export function applyRunbookRead(rows: readonly Row[], read: RunbookRead, now: number): RunbookOutcome {
  const waiting = rows.filter((row) => row.state === 'queued' && row.awaiting_runbook === 1).sort((a, b) => (a.id < b.id ? -1 : 1));
  const ids = waiting.map((row) => row.id);
  const updates = new Map<string, Partial<ExecutionRow>>();
  if ('failed' in read) {
    for (const row of waiting) updates.set(row.id, { awaiting_runbook: 0, held: 0 });
    return { updates, released: [], failed: read.failed, ids };
  }
  const released: Row[] = [];
  const turns = new Map<number | null, number>();
  for (const row of waiting) {
    const spec = JSON.parse(row.spec) as { runbook?: RunbookRecord; script?: string };
    const filled = JSON.stringify({ ...spec, script: read.script, runbook: { ...spec.runbook, ...read.runbook } });
    const limit = row.fanout_max_concurrency;
    const taken = turns.get(limit) ?? 0;
    const held = limit !== null && taken >= limit;
    turns.set(limit, taken + 1);
    // Its wait for an agent starts now: the read is not counted against its expiry.
    const expiresAt = now + (row.expires_at - row.queued_at);
    updates.set(row.id, { spec: filled, awaiting_runbook: 0, held: held ? 1 : 0, reason: held ? heldReason(limit, row.host_id === null ? 'instance' : 'host') : null, expires_at: expiresAt });
    if (!held) released.push(row);
  }
  return { updates, released, ids };
}
