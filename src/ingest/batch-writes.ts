import type { CompiledQuery, Kysely } from 'kysely';
import type { ActionKind } from '../actions/kind.js';
import { companionOf } from '../actions/snapshot/companion.js';
import type { AlarmStep } from '../engine/alarm-history.js';
import type { Decision, HostFacts, LimitedHost } from '../engine/decide.js';
import { latestPick } from '../engine/host-facts.js';
import { awaitingApproval } from '../executions/approvals.js';
import { queuedInserts } from '../executions/repository.js';
import { approvalTerms } from '../rules/approval.js';
import type { IncidentBook } from '../incidents/book.js';
import type { Rule } from '../rules/rule.js';
import type { Statements } from '../store/statements.js';
import type { AlertsTable, Database, EscalationsTable, IdempotencyKeysTable, NewEventRow, NewExecutionRow } from '../store/schema.js';
import type { BatchHistory } from './batch-history.js';
import { alertRow, escalationRow, eventRow, executionRow } from './rows.js';
import { safetyWrites } from './safety-writes.js';
import type { Occurrence, RuleSelector } from './occurrence.js';
import type { RaisedEvent, SessionFinder } from './writer.js';

/** A decision to record, with what was known of the call when it was made. */
export interface Decided {
  occurrence: Occurrence;
  rule: Rule;
  kind: ActionKind;
  /** The payload's host, lowercase; '' when it names none. */
  hostKey: string;
  /** A repeat of an alert is recorded too, as a `duplicate` that runs nothing. */
  decision: Decision;
  step: AlarmStep;
  /** Of the body, when the call carries an Idempotency-Key. */
  fingerprint: string;
  /** The key a repeat of this event is known by (Idempotency-Key, an alert's fingerprint), kept 24 h. */
  repeatKey: string | undefined;
}

export interface EventRows {
  event: NewEventRow;
  executions: NewExecutionRow[];
}

/** Everything one group commit writes, collected decision by decision, then compiled at once. */
export class BatchWrites {
  private readonly events: NewEventRow[] = [];
  private readonly executions: NewExecutionRow[] = [];
  private readonly escalations = new Map<string, EscalationsTable>();
  private readonly keys: IdempotencyKeysTable[] = [];
  private readonly alerts: AlertsTable[] = [];
  private readonly pickedHosts = new Map<string, number>();
  private readonly lastPickAt = new Map<string, number>();
  /** Whether the batch gave the notifier's loop work: an escalation window opened. */
  givesNotifierWork = false;
  /** Whether the batch queued runs for the service's executor (an email runbook). */
  givesServiceWork = false;
  /** Whether the batch queued runs whose script is to be read from git first (executions/runbook-stage.ts). */
  givesRunbookWork = false;

  constructor(
    private readonly db: Kysely<Database>,
    private readonly statements: Statements,
    private readonly executionExpirySeconds: number,
    private readonly now: number,
    private readonly readySession: SessionFinder = () => undefined,
  ) {}

  /**
   * The rows of a decision's event and its executions (held ones last), nothing kept yet: what
   * one event's payload can make throw (serialising it) throws here, before the batch holds any of
   * it, so that event fails alone (writer.ts).
   */
  rowsOf({ occurrence: s, rule, kind, hostKey, decision, step }: Decided): EventRows {
    const event = eventRow(s, rule.id, { outcome: decision.outcome, reason: decision.reason, hostKey, alarmState: step.state, stateChanged: step.changed });
    // The fix waits for a person's yes when the rule asks; its capture of graphs does not (it changes nothing).
    const terms = decision.outcome === 'accepted' ? approvalTerms(rule) : null;
    const asked = (row: NewExecutionRow) => (terms ? awaitingApproval(row, terms) : row);
    const executions = decision.outcome === 'accepted' ? [
      ...decision.targets.map((host) => this.dispatchedIfReady(asked(executionRow(rule, kind, event, { host }, this.executionExpirySeconds, false)))),
      ...decision.held.map((host) => asked(executionRow(rule, kind, event, { host }, this.executionExpirySeconds, true))),
      ...decision.serviceRuns.map((run) => asked(executionRow(rule, kind, event, run, this.executionExpirySeconds, run.held === true))),
    ] : [];
    const companion = executions.length > 0 ? companionOf(rule) : undefined;
    if (companion) executions.push({ ...executionRow(rule, companion, event, { about: s.payload.hostName ?? executions[0]!.hostname }, this.executionExpirySeconds, false), companion: 1 });
    return { event, executions };
  }

  /** Keeps an event's rows (from `rowsOf`) with its escalations and idempotency key. */
  add({ rule, kind, decision, fingerprint, repeatKey }: Decided, { event, executions }: EventRows, history: BatchHistory): void {
    this.events.push(event);
    for (const row of executions) {
      this.executions.push(row);
      if (row.awaiting_runbook === 1) this.givesRunbookWork = true;
    }
    // Runs by the service: the kind's own, or a fix's companion capture of graphs.
    if (executions.some((row) => row.host_id === null)) this.givesServiceWork = true;
    if ((decision.outcome === 'limited' || decision.outcome === 'accepted') && decision.escalate) {
      for (const limited of decision.limited) this.escalate(rule, kind, limited, history, event.id);
    }
    // A recorded repeat keeps the original's key: the first event stays the one a repeat points to.
    if (repeatKey !== undefined && decision.outcome !== 'duplicate') {
      this.keys.push({ rule_id: rule.id, key: repeatKey, tenant_id: rule.tenantId, event_id: event.id, fingerprint, created_at: this.now });
    }
  }

  /** Keeps an integration's alert for its log, with the events it raised and its incident (at the head of the incident's alerts). */
  addAlert(occurrence: Occurrence, selector: Extract<RuleSelector, { by: 'integration' }>, events: RaisedEvent[], incident: { id: string; book: IncidentBook } | null): void {
    const row = alertRow(occurrence, selector, events);
    if (incident !== null) {
      row.incident_id = incident.id;
      row.incident_previous_id = incident.book.chain(incident.id, 'alert', row.id);
    }
    this.alerts.push(row);
  }

  /** Where the events kept so far end: the events of what is decided next start there (linkIncident). */
  mark(): number {
    return this.events.length;
  }

  /** The events kept since `mark` belong to this incident: each goes to the head of its events. */
  linkIncident(mark: number, incidentId: string, book: IncidentBook): void {
    for (let i = mark; i < this.events.length; i++) {
      const event = this.events[i]!;
      event.incident_id = incidentId;
      event.incident_previous_id = book.chain(incidentId, 'event', event.id);
    }
  }

  /**
   * Hosts a one-host target picked: the least recently picked goes first next time. Each pick of
   * the batch is a millisecond after the one before, even when the batch's occurrences came in the
   * same millisecond (a scheduler pass stores its ticks with one time): with equal times every
   * pick after the first round fell to the same host (951 of 1,000 ticks on one of 50, bench/cron.js).
   * Returns the time the pick was recorded at.
   */
  picked(tenantId: string, hostIds: string[], receivedAt: number, tenantHosts: readonly HostFacts[]): number {
    // Later than any pick the tenant's hosts remember, from this batch or an earlier one.
    const at = Math.max(receivedAt, (this.lastPickAt.get(tenantId) ?? latestPick(tenantHosts)) + 1);
    this.lastPickAt.set(tenantId, at);
    for (const id of hostIds) this.pickedHosts.set(id, at);
    return at;
  }

  compile(): CompiledQuery[] {
    const writes: CompiledQuery[] = [];
    for (const [at, ids] of groupBy(this.pickedHosts)) {
      for (const chunk of this.statements.inLists(ids, 1)) writes.push(this.db.updateTable('hosts').set({ last_picked_at: at }).where('id', 'in', chunk).compile());
    }
    writes.push(...this.statements.inserts('events', this.events));
    writes.push(...this.statements.inserts('alerts', this.alerts));
    writes.push(...queuedInserts(this.statements, this.executions, this.now));
    writes.push(...safetyWrites(this.statements, [...this.escalations.values()], this.keys));
    return writes;
  }

  /** Dispatched at once to the host's session on this node, when there is one (writer.ts). */
  private dispatchedIfReady(row: NewExecutionRow): NewExecutionRow {
    // A run whose script is still to be read from git waits for it (executions/runbook-stage.ts); one awaiting approval waits for a person.
    if (row.awaiting_runbook === 1 || row.state !== 'queued') return row;
    const session = this.readySession(row.host_id!);
    if (!session) return row;
    // A copy, then its new keys: on Node 20 a spread with new keys after it takes V8's slow path (~0.5-3 µs a row).
    const dispatched: NewExecutionRow = { ...row };
    dispatched.state = 'dispatched';
    dispatched.dispatched_at = this.now;
    dispatched.session_id = session.sessionId;
    dispatched.node_id = session.nodeId;
    return dispatched;
  }

  /** One escalation row per (rule, host, window) in the batch, counting its limited events. */
  private escalate(rule: Rule, kind: ActionKind, limited: LimitedHost, history: BatchHistory, eventId: string): void {
    const { window, opened } = history.escalationWindow(rule.id, limited.host.id, this.now, rule.actionLimit!.windowSeconds);
    if (opened) this.givesNotifierWork = true;
    const key = `${rule.id}\n${limited.host.id}\n${window.windowStart}`;
    const known = this.escalations.get(key);
    if (known) this.escalations.set(key, { ...known, limited_events: known.limited_events + 1, last_event_id: eventId });
    else this.escalations.set(key, escalationRow(rule, kind, limited, window, eventId, this.now));
  }
}

/** Host ids by the time they were picked. */
function groupBy(picked: Map<string, number>): Map<number, string[]> {
  const byTime = new Map<number, string[]>();
  for (const [id, at] of picked) {
    const ids = byTime.get(at);
    if (ids) ids.push(id);
    else byTime.set(at, [id]);
  }
  return byTime;
}
