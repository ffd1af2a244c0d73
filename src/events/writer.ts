import { CompiledQuery, type Kysely } from 'kysely';
import { decide, hostKey, type HostFacts, type Outcome } from '../engine/decide.js';
import { queuedInserts, type ExecutionSpec } from '../executions/repository.js';
import type { AlertPayload } from '../ingress/payload.js';
import type { Metrics } from '../metrics/registry.js';
import type { Rule } from '../rules/rule.js';
import { fromRow } from '../rules/repository.js';
import type { Action } from '../rules/schema.js';
import { GroupCommit } from '../store/group-commit.js';
import { newId } from '../store/ids.js';
import { runBatch } from '../store/batch.js';
import type { Database, NewEventRow, NewExecutionRow, RuleRow } from '../store/schema.js';

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
  | { status: 'stored'; eventId: string; outcome: Outcome; reason: string | null; executionIds: string[] }
  | { status: 'revoked_key' }
  | { status: 'no_trigger' };

export interface QueuedExecution {
  id: string;
  hostId: string;
}

export interface EventWriterOptions {
  maxBatch: number;
  maxQueued: number;
  /** How long an execution may wait for its host's agent before it ends `expired`. */
  executionExpirySeconds: number;
  /** Called after a commit with the executions it queued, to dispatch them. */
  onQueued: (executions: QueuedExecution[]) => void;
}

const KEY_LAST_USED_RESOLUTION_MS = 60_000;
const DEFAULT_TIMEOUT_SECONDS = 300;

/**
 * Stores events with group commit. Each transaction re-reads the keys, rules and hosts it
 * depends on, which makes revocation and rule changes exact whatever any cache holds, decides
 * (a pure function), and queues the executions with the event: all or nothing.
 */
export class EventWriter {
  private readonly queue: GroupCommit<Submission, SubmissionResult>;

  constructor(
    private readonly db: Kysely<Database>,
    private readonly metrics: Metrics,
    private readonly options: EventWriterOptions,
  ) {
    this.queue = new GroupCommit((batch) => this.commit(batch), { ...options, name: 'ingest' }, (size, seconds) => {
      metrics.ingestBatchSize.observe(size);
      metrics.ingestCommitSeconds.observe(seconds);
    });
  }

  submit(submission: Submission): Promise<SubmissionResult> {
    return this.queue.submit(submission);
  }

  drain(): Promise<void> {
    return this.queue.drain();
  }

  /**
   * One transaction in three trips to the database: begin with the reads, the target hosts
   * (only when a rule needs them), then every write with the commit (store/batch.ts).
   */
  private async commit(batch: Submission[]): Promise<SubmissionResult[]> {
    const queued: QueuedExecution[] = [];
    const results = await this.db.getExecutor().provideConnection(async (connection) => {
      const [, keyRows, ruleRows] = await runBatch(connection, [CompiledQuery.raw('begin'), this.keysQuery(batch), this.rulesQuery(batch)]);
      try {
        const keys = keyRows!.rows as Array<{ id: string; last_used_at: number | null }>;
        const rules = new Map((ruleRows!.rows as RuleRow[]).map((row) => [row.trigger_id!, fromRow(row)]));
        const hostsQuery = candidateHostsQuery(this.db, batch, rules);
        const hosts = hostsQuery ? hostsByTenant((await runBatch(connection, [hostsQuery]))[0]!.rows as HostCandidate[]) : new Map<string, HostFacts[]>();
        const { results, writes } = this.decideAll(batch, new Set(keys.map((k) => k.id)), rules, hosts, queued);
        const stale = staleKeys(keys);
        if (stale.length > 0) writes.unshift(this.db.updateTable('api_keys').set({ last_used_at: Date.now() }).where('id', 'in', stale).compile());
        await runBatch(connection, [...writes, CompiledQuery.raw('commit')]);
        return results;
      } catch (error) {
        await connection.executeQuery(CompiledQuery.raw('rollback')).catch(() => undefined);
        throw error;
      }
    });
    for (const r of results) if (r.status === 'stored') this.metrics.events.inc({ outcome: r.outcome });
    if (queued.length > 0) this.options.onQueued(queued);
    return results;
  }

  private decideAll(batch: Submission[], activeKeys: Set<string>, rules: Map<string, Rule>, hosts: Map<string, HostFacts[]>, queued: QueuedExecution[]) {
    const events: NewEventRow[] = [];
    const executions: NewExecutionRow[] = [];
    const results = batch.map((s): SubmissionResult => {
      if (!activeKeys.has(s.keyId)) return { status: 'revoked_key' };
      const rule = rules.get(s.triggerId);
      if (!rule || rule.tenantId !== s.tenantId) return { status: 'no_trigger' };
      const decision = decide(rule, { act: s.payload.act, hostName: s.payload.hostName }, hosts.get(s.tenantId) ?? []);
      const event = eventRow(s, rule.id, decision.outcome, decision.reason);
      events.push(event);
      const rows = decision.targets.map((host) => executionRow(rule, event, host, this.options.executionExpirySeconds));
      executions.push(...rows);
      for (const row of rows) queued.push({ id: row.id, hostId: row.host_id! });
      return { status: 'stored', eventId: event.id, outcome: decision.outcome, reason: decision.reason, executionIds: rows.map((r) => r.id) };
    });
    const writes: CompiledQuery[] = [];
    if (events.length > 0) writes.push(this.db.insertInto('events').values(events).compile());
    writes.push(...queuedInserts(this.db, executions, Date.now()));
    return { results, writes };
  }

  private keysQuery(batch: Submission[]): CompiledQuery {
    const keyIds = [...new Set(batch.map((s) => s.keyId))];
    return this.db.selectFrom('api_keys').select(['id', 'last_used_at']).where('id', 'in', keyIds).where('revoked_at', 'is', null).compile();
  }

  private rulesQuery(batch: Submission[]): CompiledQuery {
    const triggerIds = [...new Set(batch.map((s) => s.triggerId))];
    return this.db.selectFrom('rules').selectAll().where('trigger_id', 'in', triggerIds).where('deleted_at', 'is', null).compile();
  }
}

/** Last-used times are for people: refreshed at most once a minute per key. */
function staleKeys(keys: Array<{ id: string; last_used_at: number | null }>, now = Date.now()): string[] {
  return keys.filter((k) => k.last_used_at === null || now - k.last_used_at > KEY_LAST_USED_RESOLUTION_MS).map((k) => k.id);
}

interface HostCandidate {
  id: string;
  tenant_id: string;
  hostname: string;
  tags: string;
}

/** The hosts the batch's rules could target, or nothing to ask when no rule acts on hosts. */
function candidateHostsQuery(db: Kysely<Database>, batch: Submission[], rules: Map<string, Rule>): CompiledQuery | undefined {
  const names = new Set<string>();
  const tags = new Set<string>();
  const tenants = new Set<string>();
  for (const s of batch) {
    const rule = rules.get(s.triggerId);
    if (!rule || !rule.enabled || !s.payload.act) continue;
    tenants.add(rule.tenantId);
    if (rule.target.type === 'trigger_host' && s.payload.hostName) names.add(hostKey(s.payload.hostName));
    if (rule.target.type === 'specific_host' && rule.target.hostname) names.add(hostKey(rule.target.hostname));
    if (rule.target.type === 'specific_tags') for (const tag of rule.target.tags ?? []) tags.add(tag);
  }
  if (tenants.size === 0 || (names.size === 0 && tags.size === 0)) return undefined;
  return db
    .selectFrom('hosts')
    .select(['id', 'tenant_id', 'hostname', 'tags'])
    .where('tenant_id', 'in', [...tenants])
    .where((eb) => {
      const either = [];
      if (names.size > 0) either.push(eb('hostname_key', 'in', [...names]));
      if (tags.size > 0) either.push(eb('id', 'in', eb.selectFrom('host_tags').select('host_id').where('tag', 'in', [...tags]).where('tenant_id', 'in', [...tenants])));
      return eb.or(either);
    })
    .compile();
}

function hostsByTenant(rows: HostCandidate[]): Map<string, HostFacts[]> {
  const byTenant = new Map<string, HostFacts[]>();
  for (const row of rows) {
    const host: HostFacts = { id: row.id, hostname: row.hostname, tags: JSON.parse(row.tags) as string[] };
    byTenant.set(row.tenant_id, [...(byTenant.get(row.tenant_id) ?? []), host]);
  }
  return byTenant;
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

function executionRow(rule: Rule, event: NewEventRow, host: HostFacts, expirySeconds: number): NewExecutionRow {
  const id = newId(event.received_at);
  const spec: ExecutionSpec = {
    ...runnable(rule.action),
    env: JSON.parse(event.env) as Record<string, string>,
    context: {
      PITCREW_EXECUTION_ID: id,
      PITCREW_EVENT_ID: event.id,
      PITCREW_RULE_ID: rule.id,
      PITCREW_RULE_NAME: rule.name,
      PITCREW_HOSTNAME: host.hostname,
    },
  };
  return {
    id,
    tenant_id: rule.tenantId,
    rule_id: rule.id,
    event_id: event.id,
    host_id: host.id,
    hostname: host.hostname,
    state: 'queued',
    reason: null,
    spec: JSON.stringify(spec),
    stdout: '',
    stderr: '',
    stdout_truncated: 0,
    stderr_truncated: 0,
    queued_at: event.received_at,
    expires_at: event.received_at + expirySeconds * 1000,
  };
}

function runnable(action: Action): Pick<ExecutionSpec, 'flavour' | 'interpreter' | 'script' | 'timeoutSeconds'> {
  if (action.type !== 'script') throw new Error(`${action.type} actions do not run on hosts`);
  return {
    flavour: action.flavour,
    interpreter: action.runbook.interpreter ?? 'sh',
    script: action.runbook.script,
    timeoutSeconds: action.timeoutSeconds ?? DEFAULT_TIMEOUT_SECONDS,
  };
}
