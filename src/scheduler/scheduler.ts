import type { FastifyBaseLogger } from 'fastify';
import type { Kysely } from 'kysely';
import type { Occurrence } from '../ingest/occurrence.js';
import { tickPayload } from '../ingest/tick-payload.js';
import type { EventWriter, OccurrenceResult } from '../ingest/writer.js';
import { MAX_DATE_MS, planTick, type CronTrigger, type TickPlan } from '../rules/cron.js';
import { ACTIVE_STATES } from '../executions/states.js';
import type { Database } from '../store/schema.js';
import { chunksWithin } from '../store/statements.js';
import { preparedQuery } from '../store/prepared.js';

export interface SchedulerDeps {
  db: Kysely<Database>;
  writer: EventWriter;
  logger: FastifyBaseLogger;
  clock: () => number;
  /** How often this node looks for due ticks (1 s). */
  intervalMs: number;
  /** How late a tick may still run after the service was down (PITCREW_SCHEDULE_GRACE_SECONDS, 5 min). */
  graceMs: number;
  /** Tells people once that a tick's event ran nothing (notify/not-run.ts). */
  tellNotRun?: (tenantId: string, eventId: string) => Promise<unknown>;
}

/** Due schedules taken per pass; the rest wait for the next pass a moment later. */
const PASS_LIMIT = 1000;

/** The shortest wait between passes, so a schedule that stays due (a tick that cannot be stored) is not retried in a busy loop. */
const MIN_DELAY_MS = 5;

interface DueRow {
  rule_id: string;
  tenant_id: string;
  next_at: number;
  waiting_tick: number | null;
  trigger: string;
}

/** A run of the rule that has not ended. */
type Unfinished = { id: string; state: string } | undefined;

/** Whether the pass needs to know if the rule's last run ended: a tick waits for it, or the due tick's overlap depends on it. */
function watchesRuns(row: DueRow, trigger: CronTrigger, now: number): boolean {
  if (row.waiting_tick !== null) return true;
  return Number(row.next_at) <= now && (trigger.overlap ?? 'skip') !== 'allow';
}

/**
 * Fires cron rules (docs/scheduler.md). Every node looks for due ticks at the next one, and at
 * least every second; each tick is
 * an occurrence through the spine, raised by the service itself, with the tick's time as its
 * idempotency key, so that the nodes that see it at once store it once (the ingest transaction
 * re-reads the key under the rule's lock). The tick is then moved on with a compare-and-set on
 * `next_at`: a node that dies between the two leaves a tick that the next pass stores as a
 * duplicate and moves on. Exactly once per tick, across restarts and nodes, with no timer trusted.
 */
export class Scheduler {
  private timer: NodeJS.Timeout | undefined;
  private running: Promise<unknown> = Promise.resolve();
  private stopped = true;
  private failed = false;

  constructor(private readonly deps: SchedulerDeps) {}

  start(): void {
    this.stopped = false;
    this.arm(this.deps.intervalMs);
  }

  async stop(): Promise<void> {
    this.stopped = true;
    clearTimeout(this.timer);
    await this.running;
  }

  /**
   * The next pass comes at the next due tick, or after the interval, whichever is first: a tick
   * starts on its second rather than up to an interval late, and ticks that other nodes' rules
   * add or that wait for a run to end are seen within the interval. One pass at a time on this
   * node; after a failure the next waits the interval rather than retry at once.
   */
  private arm(delayMs: number): void {
    this.timer = setTimeout(() => {
      this.running = this.running
        .then(() => this.pass())
        .catch((error: unknown) => {
          this.failed = true;
          this.deps.logger.error({ err: error }, 'scheduler pass failed; next one in a moment');
        })
        .then(() => this.nextDelay())
        .catch(() => this.deps.intervalMs)
        .then((delay) => {
          if (!this.stopped) this.arm(delay);
        });
    }, delayMs);
    this.timer.unref();
  }

  private async nextDelay(): Promise<number> {
    if (this.failed) {
      this.failed = false;
      return this.deps.intervalMs;
    }
    const [row] = await nextTick(this.deps.db);
    const next = row?.next === null || row?.next === undefined ? Infinity : Number(row.next);
    // A timer may fire a little early (its clock is the event loop's cached time): the pass then finds nothing and the next aims again.
    return Math.max(MIN_DELAY_MS, Math.min(this.deps.intervalMs, next - this.deps.clock()));
  }

  /** Fires every tick due at `now`; resolves with how many schedules it handled. */
  async pass(now = this.deps.clock()): Promise<number> {
    const due = (await dueTicks(this.deps.db, now)) as DueRow[];
    // Ticks that wait for a previous run to end (overlap queue): few, looked at every pass.
    const seen = new Set(due.map((row) => row.rule_id));
    const waiting = (await waitingTicks(this.deps.db)) as DueRow[];
    due.push(...waiting.filter((row) => !seen.has(row.rule_id)));
    const parsed = due.map((row) => ({ row, trigger: JSON.parse(row.trigger) as CronTrigger }));
    const unfinished = await this.unfinishedRuns(parsed.filter(({ row, trigger }) => watchesRuns(row, trigger, now)).map(({ row }) => row.rule_id));
    const handled = await Promise.allSettled(parsed.map(({ row, trigger }) => this.fire(row, trigger, now, unfinished.get(row.rule_id))));
    for (const outcome of handled) {
      if (outcome.status !== 'rejected') continue;
      this.failed = true;
      this.deps.logger.error({ err: outcome.reason }, 'a scheduled tick was not stored; the next pass tries it again');
    }
    return due.length;
  }

  private async fire(row: DueRow, trigger: CronTrigger, now: number, unfinished: Unfinished): Promise<void> {
    const due = Number(row.next_at);
    const plan = due <= now ? planTick(trigger, due, now, this.deps.graceMs) : undefined;
    const waiting = row.waiting_tick === null ? null : Number(row.waiting_tick);
    const turn = tickTurn(trigger, plan, waiting, unfinished);
    const occurrences = tickOccurrences(row, trigger, turn, now, this.deps.graceMs);
    const results = occurrences.length > 0 ? await this.deps.writer.submitAll(occurrences) : [];
    if (results.some((result) => result.status === 'no_rule')) {
      await this.deps.db.deleteFrom('schedules').where('rule_id', '=', row.rule_id).where('next_at', '=', due).execute();
      return;
    }
    logFailures(this.deps.logger, row.rule_id, results);
    await this.tellNotRun(row.tenant_id, results);
    await this.moveOn(row, turn, now);
  }

  /** A tick that ran nothing for want of a host: people hear it before the schedule moves on (once: see not-run.ts). */
  private async tellNotRun(tenantId: string, results: OccurrenceResult[]): Promise<void> {
    for (const result of results) {
      if ((result.status === 'stored' || result.status === 'replayed') && result.outcome === 'no_target') await this.deps.tellNotRun?.(tenantId, result.eventId);
    }
  }

  /**
   * A run of each rule that has not ended, if any: two statements for a pass, whatever its number
   * of rules (one per rule made a pass of 1,000 ticks on PostgreSQL wait for 1,000 round trips).
   * Exact for overlap: a rule's ticks are stored one after another (the next is due only once the
   * last moved on), and only ticks raise it.
   */
  private async unfinishedRuns(ruleIds: string[]): Promise<Map<string, NonNullable<Unfinished>>> {
    const found = new Map<string, NonNullable<Unfinished>>();
    for (const some of chunksWithin(ruleIds, 500)) {
      const first = await this.deps.db.selectFrom('executions').select((eb) => [eb.fn.min('id').as('id')]).where('rule_id', 'in', some).where('state', 'in', [...ACTIVE_STATES]).groupBy('rule_id').execute();
      const ids = first.flatMap((row) => (row.id ? [row.id] : []));
      if (ids.length === 0) continue;
      for (const row of await this.deps.db.selectFrom('executions').select(['id', 'rule_id', 'state']).where('id', 'in', ids).execute()) found.set(row.rule_id, { id: row.id, state: row.state });
    }
    return found;
  }

  /**
   * Compare-and-set on what this pass read (next_at and waiting_tick): only the node that moves the
   * schedule from that state owns the move; another that read the same state stored the same ticks
   * (their idempotency keys make them one) and changes nothing.
   */
  private async moveOn(row: DueRow, turn: TickTurn, now: number): Promise<void> {
    const { db } = this.deps;
    const { plan } = turn;
    const read = db.updateTable('schedules').where('rule_id', '=', row.rule_id).where('next_at', '=', row.next_at)
      .where('waiting_tick', row.waiting_tick === null ? 'is' : '=', row.waiting_tick);
    if (plan === undefined) {
      await read.set({ waiting_tick: turn.waiting, updated_at: now, ...(turn.released === undefined ? {} : { last_tick_at: turn.released }) }).execute();
      return;
    }
    if (plan.next === undefined && turn.waiting === null) {
      await db.deleteFrom('schedules').where('rule_id', '=', row.rule_id).where('next_at', '=', row.next_at).execute();
      return;
    }
    const lastTick = plan.run ?? plan.missed?.last ?? Number(row.next_at);
    await read.set({ next_at: plan.next ?? MAX_DATE_MS, last_tick_at: lastTick, waiting_tick: turn.waiting, updated_at: now }).execute();
  }
}

/** What a pass does with a schedule: the waiting tick it lets run, the due tick's fate, what waits after. */
export interface TickTurn {
  /** The due ticks, when some are due. */
  plan: TickPlan | undefined;
  /** The waiting tick that runs now (its previous run ended). */
  released: number | undefined;
  /** The due tick runs now. */
  runs: boolean;
  /** Why the due tick is recorded and not run (overlap). */
  skipped: string | undefined;
  /** The tick that waits after this pass (overlap queue). */
  waiting: number | null;
}

/**
 * Pure: the overlap policy applied to a pass (docs/scheduler.md, "Overlap"). `skip` records a due
 * tick while a run goes on; `allow` runs it; `queue` keeps it waiting until the run ends, then runs
 * it, with at most one tick waiting: another that comes meanwhile is recorded, not run, so a stuck
 * run never builds a backlog. A waiting tick released now counts as the run that goes on.
 */
export function tickTurn(trigger: CronTrigger, plan: TickPlan | undefined, waiting: number | null, unfinished: Unfinished): TickTurn {
  const overlap = trigger.overlap ?? 'skip';
  const released = waiting !== null && unfinished === undefined ? waiting : undefined;
  const turn: TickTurn = { plan, released, runs: false, skipped: undefined, waiting: released === undefined ? waiting : null };
  if (plan?.run === undefined) return turn;
  const previous = released !== undefined
    ? `the tick of ${iso(released)}, which waited for the run before it, runs now`
    : unfinished && `the previous run (execution ${unfinished.id}, ${unfinished.state}) has not ended`;
  const waits = turn.waiting;
  if (previous === undefined || overlap === 'allow') turn.runs = true;
  else if (overlap === 'skip') turn.skipped = `overlap: ${previous}, and the rule skips a tick meanwhile (trigger.overlap skip): recorded, not run`;
  else if (waits === null) turn.waiting = plan.run;
  else turn.skipped = `overlap: ${previous}, and the tick of ${iso(waits)} already waits for it; the rule keeps one tick waiting (trigger.overlap queue): recorded, not run`;
  return turn;
}

/** The occurrences of a pass: the waiting tick that runs, the missed ticks recorded as one event, and the due tick. */
export function tickOccurrences(row: Pick<DueRow, 'rule_id' | 'tenant_id'>, trigger: CronTrigger, turn: TickTurn, now: number, graceMs: number): Occurrence[] {
  const occurrences: Occurrence[] = [];
  const of = (tick: number, idempotencyKey: string, recordOnly?: string): Occurrence => ({
    tenantId: row.tenant_id,
    rule: { by: 'rule', ruleId: row.rule_id },
    source: 'cron',
    sourceIp: null,
    receivedAt: now,
    credential: { kind: 'service' },
    payload: tickPayload(trigger, tick),
    idempotencyKey,
    recordOnly,
  });
  if (turn.released !== undefined) occurrences.push(of(turn.released, `cron:${turn.released}`));
  const { plan } = turn;
  if (plan?.missed) {
    const { count, first, last, atLeast } = plan.missed;
    const span = count === 1 ? `the tick of ${iso(first)}` : `${atLeast ? 'at least ' : ''}${count} ticks from ${iso(first)} to ${iso(last)}`;
    occurrences.push(of(first, `cron-missed:${first}`, `missed: ${span} came while no service node ran, more than ${Math.round(graceMs / 1000)} s ago (the grace, PITCREW_SCHEDULE_GRACE_SECONDS): recorded, not run`));
  }
  if (plan?.run !== undefined && (turn.runs || turn.skipped)) occurrences.push(of(plan.run, `cron:${plan.run}`, turn.skipped));
  return occurrences;
}

function logFailures(logger: FastifyBaseLogger, ruleId: string, results: OccurrenceResult[]): void {
  for (const result of results) {
    if (result.status === 'unstorable') logger.error({ err: result.error, ruleId }, 'a scheduled tick could not be stored (an error of the service)');
  }
}

function iso(ms: number): string {
  return new Date(ms).toISOString();
}

// Every pass's reads (built once: store/prepared.ts).
const nextTick = preparedQuery((db) => db.selectFrom('schedules').select((eb) => eb.fn.min('next_at').as('next')));

const tickRows = (db: Kysely<Database>) => db
  .selectFrom('schedules')
  .innerJoin('rules', 'rules.id', 'schedules.rule_id')
  .select(['schedules.rule_id', 'schedules.tenant_id', 'schedules.next_at', 'schedules.waiting_tick', 'rules.trigger']);

const dueTicks = preparedQuery((db, now: number) => tickRows(db).where('schedules.next_at', '<=', now).orderBy('schedules.next_at').limit(PASS_LIMIT));

const waitingTicks = preparedQuery((db) => tickRows(db).where('schedules.waiting_tick', 'is not', null).limit(PASS_LIMIT));
