import type { Kysely } from 'kysely';
import { alarmStep } from '../engine/alarm-history.js';
import { decide, type HostFacts, type OriginalEvent, type Outcome } from '../engine/decide.js';
import { payloadForKind, type SkippedEnv } from './alert.js';
import type { Metrics } from '../metrics/registry.js';
import { inBatchTransaction, type Committed } from '../store/batch.js';
import type { Dialect } from '../store/database.js';
import type { Durability } from '../store/durability.js';
import { isRefusedData } from '../store/faults.js';
import { GroupCommit } from '../store/group-commit.js';
import { Statements } from '../store/statements.js';
import type { Database, NewExecutionRow, RuleRow } from '../store/schema.js';
import { BatchReads } from './batch-reads.js';
import { hostsByTenant, type HostCandidate } from '../engine/host-facts.js';
import type { ActionKinds } from '../actions/kinds.js';
import { pickOf } from '../rules/rule.js';
import type { ExecutionSpec } from '../executions/repository.js';
import { BatchHistory } from './batch-history.js';
import { BatchWrites } from './batch-writes.js';
import { candidateHostsQuery } from './candidate-hosts.js';
import { fingerprintOf } from './rows.js';
import type { Occurrence } from './occurrence.js';
import { eventFactsOf, raisesOf, type Raise } from './raises.js';
import { safetyReads, type GuardedEvent } from './safety-reads.js';
import type { IncidentBook, Sighting } from '../incidents/book.js';
import { incidentLinkWrites } from '../incidents/links.js';
import { IncidentReads } from '../incidents/reads.js';
import { incidentWrites } from '../incidents/writes.js';

/** What became of one rule an occurrence raised. */
export type RaisedEvent =
  /** skippedEnv: the payload's names the rule's runbook does not get, with why (its kind may refuse more than ingress). */
  | { status: 'stored'; ruleId: string; eventId: string; outcome: Outcome; reason: string | null; executionIds: string[]; skippedEnv: SkippedEnv[] }
  /** The same Idempotency-Key within 24 h: the original event, and nothing new stored or run. */
  | ({ status: 'replayed'; ruleId: string; skippedEnv: SkippedEnv[] } & OriginalEvent)
  /** The key was used within 24 h for a different body. */
  | { status: 'idempotency_conflict'; ruleId: string };

export type OccurrenceResult =
  | RaisedEvent
  /** An integration's alert: one event per rule it matched (none: recorded on no rule). */
  | { status: 'alert'; events: RaisedEvent[] }
  | { status: 'revoked_key' }
  /** The key no longer has the webhook scope (narrowed since the caller's node cached it). */
  | { status: 'key_lacks_scope' }
  /** No such rule in the occurrence's tenant (deleted, or never there). */
  | { status: 'no_rule' }
  /**
   * This event alone could not be made into rows (an error of the service, logged by the caller):
   * nothing of it was stored, the rest of its batch was. A retry of the same call fails the same way.
   */
  | { status: 'unstorable'; error: unknown };

export interface QueuedExecution {
  id: string;
  hostId: string;
  /** Set when the ingest transaction already dispatched it to this node's session of the host. */
  claim?: IngestClaim;
}

/** An execution dispatched in the transaction that queued it: what to send, and on which session. */
export interface IngestClaim {
  sessionId: string;
  spec: ExecutionSpec;
}

/** The session of this node that holds a host's agent, ready for work, if any. */
export type SessionFinder = (hostId: string) => { sessionId: string; nodeId: string } | undefined;

export interface EventWriterOptions {
  dialect: Dialect;
  maxBatch: number;
  maxQueued: number;
  /** How long an execution may wait for its host's agent before it ends `expired`. */
  executionExpirySeconds: number;
  /** Called after a commit with the executions it queued, to dispatch them. */
  onQueued: (executions: QueuedExecution[]) => void;
  /** The time history windows are measured against (tests move it instead of waiting). */
  clock?: () => number;
  /**
   * Work for an agent connected to this node is dispatched in the ingest transaction itself, so
   * the agent hears of it after one commit, not two (trigger-to-start latency, bench/e2e).
   */
  readySession?: SessionFinder;
  /** The action kinds rules may name (actions/kinds.ts). */
  kinds: ActionKinds;
  /** Called after a commit that opened an escalation window (an action limit was reached): the notifier's work. */
  onNotifierWork?: () => void;
  /** Called after a commit that queued runs for the service itself (an email runbook): the executor's work. */
  onServiceWork?: () => void;
  /** Called after a commit that queued runs whose script is to be read from git first: the runbook stage's work. */
  onRunbookWork?: () => void;
  /** Told of an error after a commit (dispatch, wake-ups): the batch's events are stored all the same. */
  onAfterCommitError?: (error: unknown) => void;
}

const KEY_LAST_USED_RESOLUTION_MS = 60_000;

/**
 * Stores events with group commit. Each transaction re-reads the keys, rules and hosts it
 * depends on, which makes revocation and rule changes exact whatever any cache holds, decides
 * (a pure function), and queues the executions with the event: all or nothing.
 */
export class EventWriter {
  /** A job is one delivery: its occurrences share a transaction (an integration's notification). */
  private readonly queue: GroupCommit<Occurrence[], OccurrenceResult[]>;
  private readonly statements: Statements;

  constructor(
    private readonly db: Kysely<Database>,
    private readonly durability: Durability,
    private readonly metrics: Metrics,
    private readonly options: EventWriterOptions,
  ) {
    this.statements = new Statements(options.dialect);
    this.queue = new GroupCommit((batch) => this.commit(batch), { ...options, name: 'ingest', mayBeOneJob: isRefusedData, sizeOf: (delivery) => delivery.length }, (size, seconds) => {
      metrics.ingestBatchSize.observe(size);
      metrics.ingestCommitSeconds.observe(seconds);
    });
  }

  /** Stores the occurrence as an event of its rule, decided, with its executions: answered once durable. */
  submit(occurrence: Occurrence): Promise<OccurrenceResult> {
    // A reaction, not an async function: one promise and one turn of the microtask queue less per call.
    return this.queue.submit([occurrence]).then(firstResult);
  }

  /**
   * Stores occurrences that arrived together (the alerts of one notification) in one transaction:
   * all of them or, when the transaction fails, none, so the tool's retry finds nothing half done.
   */
  submitAll(occurrences: Occurrence[]): Promise<OccurrenceResult[]> {
    return this.queue.submit(occurrences);
  }

  drain(): Promise<void> {
    return this.queue.drain();
  }

  /**
   * One transaction in three trips to the database: begin with the reads; the target hosts and
   * the history of guarded rules (only when a rule needs them: safety-reads.ts); then every write
   * with the commit (store/batch.ts).
   */
  private async commit(deliveries: Occurrence[][]): Promise<Committed<OccurrenceResult[][]>> {
    const committed = await this.commitOccurrences(deliveries.flat());
    let at = 0;
    const value = deliveries.map((delivery) => committed.value.slice(at, (at += delivery.length)));
    return { value, durable: committed.durable };
  }

  private async commitOccurrences(batch: Occurrence[]): Promise<Committed<OccurrenceResult[]>> {
    const queued: QueuedExecution[] = [];
    let work = { notifier: false, service: false, runbook: false };
    const now = this.now();
    // What the batch's occurrences say of alarms: their incidents are read with the rules, kept with the events.
    const sightings = batch.map(sightingOf);
    const committed = await inBatchTransaction(this.db, this.durability, async (tx) => {
      const queries = BatchReads.queries(this.statements, batch);
      const incidents = new IncidentReads(this.statements, this.options.dialect, sightings.filter((s) => s !== undefined), now);
      const first = await tx.begin([...(queries.keys ? [queries.rules, queries.keys] : [queries.rules]), ...incidents.queries]);
      const [ruleRows, keyRows] = queries.keys ? first : [first[0], undefined];
      const reads = new BatchReads((keyRows?.rows ?? []) as Array<{ id: string; last_used_at: number | null; scopes: string }>, ruleRows!.rows as RuleRow[]);
      const book = incidents.book(first);
      // Each occurrence's rules, read once for the whole transaction: host candidates, history, decisions.
      const raised = batch.map((o) => raisesOf(o, reads));
      const hostsQuery = candidateHostsQuery(this.statements, raised.flat());
      const safety = safetyReads(this.db, this.statements, this.options.dialect, guardedEvents(raised.flat()), now);
      const history = new BatchHistory();
      let hosts = new Map<string, HostFacts[]>();
      if (hostsQuery || safety.queries.length > 0) {
        const found = await tx.read([...(hostsQuery ? [hostsQuery] : []), ...safety.queries]);
        if (hostsQuery) hosts = hostsByTenant(found[0]!.rows as HostCandidate[]);
        safety.load(found, history);
      }
      const { results, writes, givesNotifierWork, givesServiceWork, givesRunbookWork } = this.decideAll(batch, raised, reads, hosts, history, queued, { book, sightings });
      work = { notifier: givesNotifierWork, service: givesServiceWork, runbook: givesRunbookWork };
      const stale = staleKeys(reads.usedKeys());
      if (stale.length > 0) writes.unshift(this.db.updateTable('api_keys').set({ last_used_at: now }).where('id', 'in', stale).compile());
      await tx.commit(writes);
      return results;
    });
    // Agents hear of an execution only once it is on disk: a power cut cannot undo what ran.
    const durable = committed.durable.then(() => this.afterCommit(committed.value, queued, work));
    return { value: committed.value, durable };
  }

  /**
   * What follows a durable commit. Its failure is reported, never thrown: the events are stored,
   * and a caller told otherwise would retry and store them twice. The sweeper dispatches what
   * was not (executions/sweeper.ts), and the notifier's poll finds its work.
   */
  private afterCommit(results: OccurrenceResult[], queued: QueuedExecution[], work: { notifier: boolean; service: boolean; runbook: boolean }): void {
    try {
      for (const r of results) {
        for (const e of r.status === 'alert' ? r.events : [r]) {
          if (e.status === 'stored') this.metrics.events.inc({ outcome: e.outcome });
          if (e.status === 'replayed') this.metrics.events.inc({ outcome: 'duplicate' });
        }
      }
      if (queued.length > 0) this.options.onQueued(queued);
      if (work.notifier) this.options.onNotifierWork?.();
      if (work.service) this.options.onServiceWork?.();
      if (work.runbook) this.options.onRunbookWork?.();
    } catch (error) {
      this.options.onAfterCommitError?.(error);
    }
  }

  private now(): number {
    return this.options.clock?.() ?? Date.now();
  }

  private decideAll(batch: Occurrence[], raised: Raise[][], reads: BatchReads, hosts: Map<string, HostFacts[]>, history: BatchHistory, queued: QueuedExecution[], incidents: BatchIncidents) {
    const writes = new BatchWrites(this.db, this.statements, this.options.executionExpirySeconds, this.now(), this.options.readySession);
    const results = batch.map((o, i): OccurrenceResult => {
      // One call's failure is its own: the batch it shares with others' calls is stored without it.
      try {
        return decideOne(o, raised[i]!, this.options.kinds, reads, hosts, history, writes, queued, { book: incidents.book, sighting: incidents.sightings[i] });
      } catch (error) {
        return { status: 'unstorable', error };
      }
    });
    // The incidents after the events, alerts and executions: one insert, one update of those touched, one of those resolved.
    // Then what a person's runs on incidents add to them (incidentLinks), appended to what those wrote.
    const links = batch.flatMap((o, i) => this.incidentLinks(o, results[i]!));
    const compiled = [...writes.compile(), ...incidentWrites(this.statements, this.options.dialect, incidents.book), ...links];
    return { results, writes: compiled, givesNotifierWork: writes.givesNotifierWork, givesServiceWork: writes.givesServiceWork, givesRunbookWork: writes.givesRunbookWork };
  }

  /** A person's run on an incident (Troubleshoot now, Fix now): its executions and rule join the incident's. */
  private incidentLinks(o: Occurrence, result: OccurrenceResult) {
    if (o.incidentId === undefined || result.status !== 'stored') return [];
    // A composed run's rule is pitcrew's own: the incident's rules stay those of the tenant.
    const ruleId = o.rule.by === 'composed' || result.executionIds.length === 0 ? null : result.ruleId;
    return incidentLinkWrites(this.options.dialect, { tenantId: o.tenantId, incidentId: o.incidentId, eventId: result.eventId, ruleId, executionIds: result.executionIds });
  }
}

function firstResult(results: OccurrenceResult[]): OccurrenceResult {
  return results[0]!;
}

/** The batch's incidents, and what each occurrence says of an alarm (by the batch's index). */
interface BatchIncidents {
  book: IncidentBook;
  sightings: Array<Sighting | undefined>;
}

/**
 * One occurrence of the batch: each rule it raises decided against the batch's history, its rows
 * kept with the batch's. Whatever can throw runs before the history or the batch hold anything of it.
 * An alarm it names is kept as an incident with it: an integration's alert whatever the rules made
 * of it (none matched, the rule off, a duplicate), a webhook call once its event is stored.
 */
function decideOne(s: Occurrence, raises: Raise[], kinds: ActionKinds, reads: BatchReads, hosts: Map<string, HostFacts[]>, history: BatchHistory, writes: BatchWrites, queued: QueuedExecution[], incident: { book: IncidentBook; sighting: Sighting | undefined }): OccurrenceResult {
  const refusal = reads.refusal(s);
  if (refusal) return { status: refusal };
  const mark = writes.mark();
  const decideEach = () => raises.map((raise) => decideRaise(raise, kinds, hosts, history, writes, queued));
  const sighted = (events: RaisedEvent[]): string | null => {
    const incidentId = incident.sighting ? incident.book.sight(incident.sighting) : null;
    if (incidentId === null) return null;
    const stored = events.filter((e) => e.status === 'stored');
    incident.book.link(incidentId, stored.map((e) => e.ruleId), stored.flatMap((e) => e.executionIds));
    writes.linkIncident(mark, incidentId, incident.book);
    return incidentId;
  };
  if (s.rule.by === 'integration') {
    const events = decideEach();
    const incidentId = sighted(events);
    writes.addAlert(s, s.rule, events, incidentId === null ? null : { id: incidentId, book: incident.book });
    return { status: 'alert', events };
  }
  if (raises.length === 0) return { status: 'no_rule' };
  const event = decideEach()[0]!;
  // A replayed call (its Idempotency-Key) stored nothing new: the incident heard of it the first time.
  if (event.status === 'stored') sighted([event]);
  return event;
}

function decideRaise(raise: Raise, kinds: ActionKinds, hosts: Map<string, HostFacts[]>, history: BatchHistory, writes: BatchWrites, queued: QueuedExecution[]): RaisedEvent {
  const { rule, hostKey, repeat } = raise;
  const kind = kinds.of(rule.action.type);
  const fingerprint = repeat?.mode === 'replay' ? fingerprintOf(raise.occurrence) : '';
  const remembered = repeat === undefined ? undefined : history.remembers(rule.id, repeat.key);
  if (remembered && repeat!.mode === 'replay' && remembered.fingerprint !== fingerprint) return { status: 'idempotency_conflict', ruleId: rule.id };
  // The payload as this rule's action takes it: the event stores, and the reply lists, what it refuses.
  const payload = payloadForKind(raise.occurrence.payload, kind);
  const s = payload === raise.occurrence.payload ? raise.occurrence : { ...raise.occurrence, payload };
  const facts = eventFactsOf({ ...raise, occurrence: s });
  const before = history.factsFor(rule, hostKey, repeat?.key);
  const decision = decide(rule, facts, hosts.get(s.tenantId) ?? [], kind, before);
  if (decision.outcome === 'duplicate' && repeat!.mode === 'replay') return { status: 'replayed', ruleId: rule.id, ...decision.original, skippedEnv: remembered!.skippedEnv };
  const recorded = decision.outcome === 'duplicate'
    ? { ...decision, reason: `a re-sent notification of an alert this rule already recorded (event ${decision.original.eventId}): not acted on again` }
    : decision;
  const decided = { occurrence: s, rule, kind, hostKey, decision: recorded, step: alarmStep(before.alarms, facts), fingerprint, repeatKey: repeat?.key };
  const rows = writes.rowsOf(decided);
  history.record(rule, hostKey, facts, decision);
  writes.add(decided, rows, history);
  const { event, executions } = rows;
  if (decision.outcome === 'accepted' && pickOf(rule) === 'one' && rule.target.type === 'specific_tags') {
    // The next pick of this batch, and of the batches after it, goes to another host.
    const at = writes.picked(s.tenantId, decision.targets.map((host) => host.id), s.receivedAt, hosts.get(s.tenantId) ?? []);
    for (const host of decision.targets) host.lastPickedAt = at;
  }
  // No host: the service's executor runs it (executions/service-executor.ts).
  // Awaiting approval: nothing to tell an agent until a person approves (executions/approval-decision.ts).
  for (const row of executions) if (row.host_id && row.held === 0 && row.state !== 'awaiting_approval') queued.push(queuedOf(row));
  const executionIds = executions.map((row) => row.id);
  if (repeat !== undefined && decision.outcome !== 'duplicate') {
    const original = { eventId: event.id, outcome: decision.outcome, reason: decision.reason, executionIds };
    history.remember(rule.id, repeat.key, { original, fingerprint, skippedEnv: s.payload.skippedEnv });
  }
  return { status: 'stored', ruleId: rule.id, eventId: event.id, outcome: recorded.outcome, reason: recorded.reason, executionIds, skippedEnv: s.payload.skippedEnv };
}

/**
 * What an occurrence says of an alarm, as the incident book takes it. Written out field by field:
 * on Node 20 (V8 11.3) a spread followed by new properties (`{ ...alarm, tenantId }`) takes V8's
 * slow path, ~1-3 µs per object, where this literal costs ~25 ns
 * (bench/README.md, session 37).
 */
function sightingOf(o: Occurrence): Sighting | undefined {
  const alarm = o.alarm;
  if (!alarm) return undefined;
  return { tenantId: o.tenantId, integrationId: alarm.integrationId, observation: alarm.observation, receivedAt: o.receivedAt, repeat: alarm.repeat };
}

/** The events whose rule guards them: their rule's history is read before deciding. */
function guardedEvents(raises: Raise[]): GuardedEvent[] {
  return raises
    .filter(({ rule, repeat }) => rule.flapping.enabled || rule.actionLimit || repeat !== undefined)
    .map(({ rule, hostKey, repeat }) => ({ rule, hostKey, idempotencyKey: repeat?.key }));
}

function queuedOf(row: NewExecutionRow): QueuedExecution {
  const queued: QueuedExecution = { id: row.id, hostId: row.host_id! };
  if (row.state === 'dispatched') queued.claim = { sessionId: row.session_id!, spec: JSON.parse(row.spec) as ExecutionSpec };
  return queued;
}

/** Last-used times are for people: refreshed at most once a minute per key. */
function staleKeys(keys: Array<{ id: string; last_used_at: number | null }>, now = Date.now()): string[] {
  return keys.filter((k) => k.last_used_at === null || now - k.last_used_at > KEY_LAST_USED_RESOLUTION_MS).map((k) => k.id);
}
