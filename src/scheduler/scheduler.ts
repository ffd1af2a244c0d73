import type { FastifyBaseLogger } from 'fastify';
import type { Kysely } from 'kysely';
import type { AlertPayload } from '../ingest/alert.js';
import type { Occurrence } from '../ingest/occurrence.js';
import type { EventWriter, OccurrenceResult } from '../ingest/writer.js';
import { planTick, type CronTrigger, type TickPlan } from '../rules/cron.js';
import { ACTIVE_STATES } from '../executions/states.js';
import type { Database } from '../store/schema.js';

export interface SchedulerDeps {
  db: Kysely<Database>;
  writer: EventWriter;
  logger: FastifyBaseLogger;
  clock: () => number;
  /** How often this node looks for due ticks (1 s). */
  intervalMs: number;
  /** How late a tick may still run after the service was down (PITCREW_SCHEDULE_GRACE_SECONDS, 5 min). */
  graceMs: number;
}

/** Due schedules taken per pass; the rest wait for the next pass a moment later. */
const PASS_LIMIT = 1000;

interface DueRow {
  rule_id: string;
  tenant_id: string;
  next_at: number;
  trigger: string;
}

/**
 * Fires cron rules (docs/scheduler.md). Every node looks for due ticks every second; each tick is
 * an occurrence through the spine, raised by the service itself, with the tick's time as its
 * idempotency key, so that the nodes that see it at once store it once (the ingest transaction
 * re-reads the key under the rule's lock). The tick is then moved on with a compare-and-set on
 * `next_at`: a node that dies between the two leaves a tick that the next pass stores as a
 * duplicate and moves on. Exactly once per tick, across restarts and nodes, with no timer trusted.
 */
export class Scheduler {
  private timer: NodeJS.Timeout | undefined;
  private running: Promise<unknown> = Promise.resolve();

  constructor(private readonly deps: SchedulerDeps) {}

  start(): void {
    this.timer = setInterval(() => {
      // One pass at a time on this node: a slow pass is not overtaken by the next.
      this.running = this.running.then(() => this.pass()).catch((error: unknown) => this.deps.logger.error({ err: error }, 'scheduler pass failed; next one in a moment'));
    }, this.deps.intervalMs).unref();
  }

  async stop(): Promise<void> {
    clearInterval(this.timer);
    await this.running;
  }

  /** Fires every tick due at `now`; resolves with how many schedules it handled. */
  async pass(now = this.deps.clock()): Promise<number> {
    const due = (await this.deps.db
      .selectFrom('schedules')
      .innerJoin('rules', 'rules.id', 'schedules.rule_id')
      .select(['schedules.rule_id', 'schedules.tenant_id', 'schedules.next_at', 'rules.trigger'])
      .where('schedules.next_at', '<=', now)
      .orderBy('schedules.next_at')
      .limit(PASS_LIMIT)
      .execute()) as DueRow[];
    const handled = await Promise.allSettled(due.map((row) => this.fire(row, now)));
    for (const outcome of handled) if (outcome.status === 'rejected') this.deps.logger.error({ err: outcome.reason }, 'a scheduled tick was not stored; the next pass tries it again');
    return due.length;
  }

  private async fire(row: DueRow, now: number): Promise<void> {
    const due = Number(row.next_at);
    const trigger = JSON.parse(row.trigger) as CronTrigger;
    const plan = planTick(trigger, due, now, this.deps.graceMs);
    const overlapping = plan.run !== undefined && (trigger.overlap ?? 'skip') === 'skip' ? await this.unfinishedRun(row.rule_id) : undefined;
    const occurrences = tickOccurrences(row, trigger, plan, now, this.deps.graceMs, overlapping);
    const results = occurrences.length > 0 ? await this.deps.writer.submitAll(occurrences) : [];
    if (results.some((result) => result.status === 'no_rule')) {
      await this.deps.db.deleteFrom('schedules').where('rule_id', '=', row.rule_id).where('next_at', '=', due).execute();
      return;
    }
    logFailures(this.deps.logger, row.rule_id, results);
    await this.moveOn(row.rule_id, due, plan, now);
  }

  /**
   * A run of the rule that has not ended, if any. Exact for `overlap: skip`: a rule's ticks are
   * stored one after another (the next is due only once the last moved on), and only ticks raise it.
   */
  private async unfinishedRun(ruleId: string): Promise<{ id: string; state: string } | undefined> {
    return this.deps.db.selectFrom('executions').select(['id', 'state']).where('rule_id', '=', ruleId).where('state', 'in', [...ACTIVE_STATES]).limit(1).executeTakeFirst();
  }

  /** Compare-and-set: only the node that moves the tick from `due` owns the move. */
  private async moveOn(ruleId: string, due: number, plan: TickPlan, now: number): Promise<void> {
    const { db } = this.deps;
    if (plan.next === undefined) {
      await db.deleteFrom('schedules').where('rule_id', '=', ruleId).where('next_at', '=', due).execute();
      return;
    }
    const lastTick = plan.run ?? plan.missed?.last ?? due;
    await db.updateTable('schedules').set({ next_at: plan.next, last_tick_at: lastTick, updated_at: now }).where('rule_id', '=', ruleId).where('next_at', '=', due).execute();
  }
}

/** The occurrences of a tick's plan: the missed ticks recorded as one event, and the tick that runs. */
export function tickOccurrences(row: Pick<DueRow, 'rule_id' | 'tenant_id'>, trigger: CronTrigger, plan: TickPlan, now: number, graceMs: number, overlapping?: { id: string; state: string }): Occurrence[] {
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
  if (plan.missed) {
    const { count, first, last, atLeast } = plan.missed;
    const span = count === 1 ? `the tick of ${iso(first)}` : `${atLeast ? 'at least ' : ''}${count} ticks from ${iso(first)} to ${iso(last)}`;
    occurrences.push(of(first, `cron-missed:${first}`, `missed: ${span} came while no service node ran, more than ${Math.round(graceMs / 1000)} s ago (the grace, PITCREW_SCHEDULE_GRACE_SECONDS): recorded, not run`));
  }
  if (plan.run !== undefined) {
    const skipped = overlapping && `overlap: the previous run (execution ${overlapping.id}, ${overlapping.state}) has not ended, and the rule skips a tick meanwhile (trigger.overlap skip): recorded, not run`;
    occurrences.push(of(plan.run, `cron:${plan.run}`, skipped));
  }
  return occurrences;
}

/** What a tick gives the runbook: the time it was scheduled for, and the zone its schedule is read in. */
function tickPayload(trigger: CronTrigger, tick: number): AlertPayload {
  const timezone = trigger.timezone ?? 'UTC';
  return {
    raw: { schedule: trigger.schedule, timezone, scheduledTime: iso(tick) },
    hostName: undefined,
    appName: undefined,
    alarmName: undefined,
    severity: undefined,
    source: 'cron',
    act: true,
    alarmState: undefined,
    env: { PITCREW_SCHEDULED_TIME: iso(tick), PITCREW_SCHEDULE_TIMEZONE: timezone },
    skippedEnv: [],
  };
}

function logFailures(logger: FastifyBaseLogger, ruleId: string, results: OccurrenceResult[]): void {
  for (const result of results) {
    if (result.status === 'unstorable') logger.error({ err: result.error, ruleId }, 'a scheduled tick could not be stored (an error of the service)');
  }
}

function iso(ms: number): string {
  return new Date(ms).toISOString();
}
