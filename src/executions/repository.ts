import { sql, type CompiledQuery, type Kysely, type Transaction } from 'kysely';
import { hostKey } from '../engine/decide.js';
import { notFound } from '../errors/catalogue.js';
import { newId } from '../store/ids.js';
import type { PageRequest } from '../store/pagination.js';
import type { Statements } from '../store/statements.js';
import type { Database, ExecutionRow, NewExecutionRow } from '../store/schema.js';

type Db = Kysely<Database> | Transaction<Database>;

/** What an execution runs: a copy of the rule's runbook at trigger time, so edits never rewrite history. */
/**
 * Which runbook an execution runs (DESIGN.md §7): a stored runbook's version, a git file at a
 * commit, or a script written in the rule; always the SHA-256 of the script's bytes once known,
 * which the agent checks before it runs it. A git file's commit and hash are filled in when it is
 * read, before dispatch.
 */
export interface RunbookRecord {
  runbookId?: string;
  version?: number;
  name?: string;
  repositoryId?: string;
  repositoryName?: string;
  path?: string;
  ref?: string;
  commit?: string;
  sha256?: string;
}

export interface ExecutionSpec {
  flavour: 'autofix' | 'diagnostics';
  interpreter: 'sh' | 'bash' | 'python' | 'pwsh';
  script: string;
  /** Absent on executions queued before runbooks were recorded (migration 0020). */
  runbook?: RunbookRecord;
  env: Record<string, string>;
  /** PITCREW_* variables describing the run to the script. */
  context: Record<string, string>;
  timeoutSeconds: number;
}

/** A new execution, queued for its event: what runs is in `spec`; it expires if nothing takes it. */
export function queuedRow(
  ids: { id: string; tenantId: string; ruleId: string; eventId: string },
  target: { hostId: string | null; hostname: string },
  spec: unknown,
  queuedAt: number,
  expirySeconds: number,
): NewExecutionRow {
  return {
    id: ids.id,
    tenant_id: ids.tenantId,
    rule_id: ids.ruleId,
    event_id: ids.eventId,
    host_id: target.hostId,
    hostname: target.hostname,
    host_key: hostKey(target.hostname),
    state: 'queued',
    reason: null,
    spec: JSON.stringify(spec),
    stdout: '',
    stderr: '',
    stdout_truncated: 0,
    stderr_truncated: 0,
    queued_at: queuedAt,
    expires_at: queuedAt + expirySeconds * 1000,
    held: 0,
    fanout_max_concurrency: null,
    fanout_max_errors: null,
    placement: null,
    awaiting_runbook: 0,
    companion: 0,
  };
}

/**
 * The statements that queue executions: their rows and their first transition, and a second one
 * for those already dispatched to a session in the same transaction. As many statements as the
 * database's parameter limit needs: a fan-out over a whole fleet is stored whole, in one transaction.
 */
export function queuedInserts(statements: Statements, rows: NewExecutionRow[], at: number): CompiledQuery[] {
  if (rows.length === 0) return [];
  const transitions = rows.flatMap((row) => {
    // Its first state: queued, or awaiting a person's approval (with the reason it waits).
    const queued = row.state === 'awaiting_approval'
      ? { id: newId(at), execution_id: row.id, from_state: null, to_state: row.state, reason: row.reason ?? null, at }
      : { id: newId(at), execution_id: row.id, from_state: null, to_state: 'queued', reason: null, at };
    return row.state === 'dispatched' ? [queued, { id: newId(at), execution_id: row.id, from_state: 'queued', to_state: 'dispatched', reason: null, at }] : [queued];
  });
  return [...statements.inserts('executions', rows), ...statements.inserts('execution_transitions', transitions)];
}

export interface ExecutionFilter {
  ruleId?: string;
  eventId?: string;
  hostId?: string;
  hostname?: string;
  state?: string;
}

/** Newest first. */
export async function listExecutions(db: Db, tenantId: string, filter: ExecutionFilter, page: PageRequest): Promise<ExecutionRow[]> {
  let query = db.selectFrom('executions').selectAll().where('tenant_id', '=', tenantId);
  if (filter.ruleId) query = query.where('rule_id', '=', filter.ruleId);
  if (filter.eventId) query = query.where('event_id', '=', filter.eventId);
  if (filter.hostId) query = query.where('host_id', '=', filter.hostId);
  if (filter.hostname) query = query.where('host_key', '=', hostKey(filter.hostname));
  if (filter.state) query = query.where('state', '=', filter.state);
  if (page.after) query = query.where('id', '<', page.after);
  return query.orderBy('id', 'desc').limit(page.limit + 1).execute();
}

export async function getExecution(db: Db, tenantId: string, id: string): Promise<ExecutionRow> {
  const row = await db.selectFrom('executions').selectAll().where('id', '=', id).where('tenant_id', '=', tenantId).executeTakeFirst();
  if (!row) throw notFound('execution', id);
  return row;
}

/** An event's executions as a reply shows them: the first few ids and how many there are. */
export interface EventExecutions {
  ids: string[];
  count: number;
}

/**
 * Per event, its first `listed` execution ids (oldest first) and their count: a rule over a fleet
 * queues thousands per event, and a page of events would otherwise carry every one of them.
 */
export async function executionsOfEvents(db: Db, eventIds: string[], listed: number): Promise<Map<string, EventExecutions>> {
  const byEvent = new Map<string, EventExecutions>();
  if (eventIds.length === 0) return byEvent;
  const numbered = db
    .selectFrom('executions')
    .select((eb) => ['id', 'event_id', sql<number>`row_number() over (partition by ${eb.ref('event_id')} order by ${eb.ref('id')})`.as('n'), sql<number>`count(*) over (partition by ${eb.ref('event_id')})`.as('total')])
    .where('event_id', 'in', eventIds)
    .as('numbered');
  const rows = await db.selectFrom(numbered).selectAll().where('n', '<=', listed).orderBy('id').execute();
  for (const row of rows) {
    const known = byEvent.get(row.event_id) ?? { ids: [], count: Number(row.total) };
    known.ids.push(row.id);
    byEvent.set(row.event_id, known);
  }
  return byEvent;
}

export async function transitionsOf(db: Db, executionId: string) {
  return db.selectFrom('execution_transitions').select(['from_state', 'to_state', 'reason', 'at', 'decided_by']).where('execution_id', '=', executionId).orderBy('id').execute();
}

export async function artifactsOf(db: Db, executionId: string) {
  return db.selectFrom('execution_artifacts').select(['id', 'name', 'size']).where('execution_id', '=', executionId).orderBy('name').execute();
}
