import type { Kysely, Transaction } from 'kysely';
import { PitcrewError, notFound } from '../errors/catalogue.js';
import { counted } from '../errors/counts.js';
import { roleAtLeast, type Role } from '../identity/roles.js';
import type { ActionLimit } from '../rules/schema.js';
import type { Dialect } from '../store/database.js';
import { durableTransaction } from '../store/durable-transaction.js';
import type { Durability } from '../store/durability.js';
import { newId } from '../store/ids.js';
import type { Database, ExecutionRow } from '../store/schema.js';
import { storedTerms } from './approvals.js';
import type { LedgerOutbox } from './ledger.js';
import { countPerLimitKey, executionsInWindow, limitCountKey, lockRules } from './limit-window.js';
import type { ExecutionState } from './states.js';

/** Where a person decided (docs/approvals.md): the history and the audit log say it. */
export const DECISION_CHANNELS = ['ui', 'api', 'email', 'slack', 'teams'] as const;
export type DecisionChannel = (typeof DECISION_CHANNELS)[number];
export type Verdict = 'approve' | 'reject';

/** Who decides, with which role in the execution's tenant, through which channel. */
export interface Decider {
  userId: string;
  email: string | null;
  role: Role;
  via: DecisionChannel;
  comment?: string | undefined;
}

export interface ApprovalDeps {
  db: Kysely<Database>;
  dialect: Dialect;
  durability: Durability;
  clock: () => number;
  /** How long an approved run waits for its agent before it expires, as one queued by an event does. */
  executionExpirySeconds: number;
  /** The notifier's outbox of ended executions: a rejection is told as an ending is. */
  outboxes: LedgerOutbox[];
}

export interface Decided {
  row: ExecutionRow;
  from: ExecutionState;
}

/**
 * A person's approval or rejection of an execution awaiting it, taken exactly once: the state is
 * compared and set in one transaction, which on PostgreSQL first takes the rule's lock as ingest
 * does to count the action limit (limit-window.ts), so two nodes approving at once decide one after
 * the other and the second finds it decided. An approved run counts in the limit from then: refused
 * (and left waiting) when the limit is full. `inChange` writes the audit entry in the same transaction.
 */
export async function decideApproval(
  deps: ApprovalDeps, tenantId: string, executionId: string, verdict: Verdict, decider: Decider,
  inChange: (tx: Transaction<Database>, row: ExecutionRow) => Promise<void>,
): Promise<ExecutionRow> {
  const now = deps.clock();
  let outboxWritten: LedgerOutbox[] = [];
  const row = await durableTransaction(deps.db, deps.durability, async (tx) => {
    const seen = await tx.selectFrom('executions').select('rule_id').where('id', '=', executionId).where('tenant_id', '=', tenantId).executeTakeFirst();
    if (!seen) throw notFound('execution', executionId);
    if (deps.dialect === 'postgres') await tx.executeQuery(lockRules(tx, [seen.rule_id]));
    const current = await readForDecision(tx, deps.dialect, executionId);
    mayDecide(current, decider, verdict);
    const set = verdict === 'approve'
      // Queued from now: its wait for an agent, and its place in the action limit's window, count from the approval.
      ? { state: 'queued', approved_at: now, queued_at: now, expires_at: now + deps.executionExpirySeconds * 1000, reason: null }
      : { state: 'rejected', finished_at: now, reason: `rejected by ${whoOf(decider)}${decider.comment ? `: ${decider.comment}` : ''}` };
    if (verdict === 'approve') await withinLimit(tx, current, now);
    const updated = await tx.updateTable('executions').set(set).where('id', '=', executionId).where('state', '=', 'awaiting_approval').executeTakeFirst();
    // The row is ours under the lock (PostgreSQL) or the single writer (SQLite): a change here is a bug.
    if (Number(updated.numUpdatedRows) !== 1) throw new Error(`execution ${executionId} changed under its rule's lock`);
    const transition = { execution_id: executionId, from_state: 'awaiting_approval', to_state: set.state, reason: transitionReason(verdict, decider) };
    await tx.insertInto('execution_transitions').values({ id: newId(now), at: now, ...transition, decided_by: JSON.stringify(deciderRecord(decider)) }).execute();
    outboxWritten = await writeOutboxes(tx, deps.outboxes, [transition], now);
    const after = { ...current, ...set } as ExecutionRow;
    await inChange(tx, after);
    return after;
  });
  for (const outbox of outboxWritten) outbox.written();
  return row;
}

async function readForDecision(tx: Transaction<Database>, dialect: Dialect, executionId: string): Promise<ExecutionRow> {
  const query = tx.selectFrom('executions').selectAll().where('id', '=', executionId);
  return (dialect === 'postgres' ? query.forUpdate() : query).executeTakeFirstOrThrow();
}

/** Refuses a decision the person may not take, or one already taken: nothing changes, and the reply says why. */
function mayDecide(row: ExecutionRow, decider: Decider, verdict: Verdict): void {
  const terms = storedTerms(row);
  if (!terms) throw new PitcrewError('PITCREW_ERR_CONFLICT', `execution ${row.id} never waited for approval (its rule asks none): there is nothing to ${verdict}`);
  if (!roleAtLeast(decider.role, terms.role)) {
    throw new PitcrewError('PITCREW_ERR_FORBIDDEN', `execution ${row.id} needs ${terms.role === 'admin' ? 'an admin' : 'an operator'} or above to ${verdict} it, and your role here is ${decider.role}: ask a member with that role`);
  }
  if (row.state !== 'awaiting_approval') throw new PitcrewError('PITCREW_ERR_CONFLICT', alreadyDecided(row, verdict));
}

function alreadyDecided(row: ExecutionRow, verdict: Verdict): string {
  const nothing = `your ${verdict === 'approve' ? 'approval' : 'rejection'} changed nothing`;
  switch (row.state) {
    case 'rejected':
      return `execution ${row.id} was already ${row.reason ?? 'rejected'}; ${nothing}. To run the fix, raise its alert again or use Run now on the rule`;
    case 'expired':
      return `execution ${row.id} expired before anyone decided (${row.reason ?? 'past its approval deadline'}); ${nothing}. To run the fix, raise its alert again or use Run now on the rule`;
    case 'cancelled':
      return `execution ${row.id} was cancelled; ${nothing}. To run the fix, raise its alert again or use Run now on the rule`;
    default:
      return `execution ${row.id} was already approved and is ${row.state}: it runs once; ${nothing}`;
  }
}

/** An approved run must fit its rule's action limit now, counted under the rule's lock. */
async function withinLimit(tx: Transaction<Database>, row: ExecutionRow, now: number): Promise<void> {
  const rule = await tx.selectFrom('rules').select('action_limit').where('id', '=', row.rule_id).executeTakeFirst();
  const limit = rule?.action_limit ? (JSON.parse(rule.action_limit) as ActionLimit) : null;
  if (!limit) return;
  const counts = countPerLimitKey(await executionsInWindow(tx, row.rule_id, now - limit.windowSeconds * 1000).execute());
  const window = counts.get(limitCountKey(row));
  if (!window || window.used < limit.max) return;
  const frees = new Date(window.oldest + limit.windowSeconds * 1000).toISOString();
  throw new PitcrewError('PITCREW_ERR_CONFLICT', `the rule's action limit is reached on ${row.hostname}: ${counted(window.used, 'execution')} within ${limit.windowSeconds} s already (max ${limit.max}); nothing was approved and it still waits. Approve again after ${frees}, or reject it`);
}

function whoOf(decider: Decider): string {
  return `${decider.email ?? `user ${decider.userId}`} (${decider.via})`;
}

function transitionReason(verdict: Verdict, decider: Decider): string {
  return `${verdict === 'approve' ? 'approved' : 'rejected'} by ${whoOf(decider)}${decider.comment ? `: ${decider.comment}` : ''}`;
}

function deciderRecord(decider: Decider): { userId: string; email: string | null; via: DecisionChannel; comment?: string } {
  return { userId: decider.userId, email: decider.email, via: decider.via, ...(decider.comment ? { comment: decider.comment } : {}) };
}

async function writeOutboxes(tx: Transaction<Database>, outboxes: LedgerOutbox[], transitions: Array<{ execution_id: string; from_state: string; to_state: string; reason: string | null }>, now: number): Promise<LedgerOutbox[]> {
  const written: LedgerOutbox[] = [];
  for (const outbox of outboxes) {
    let rows = 0;
    for (const query of outbox.writes(transitions, now)) rows += Number((await tx.executeQuery(query)).numAffectedRows ?? 0n);
    if (rows > 0) written.push(outbox);
  }
  return written;
}
