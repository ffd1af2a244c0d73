import { Cron } from 'croner';
import type { Trigger } from './schema.js';

export type CronTrigger = Extract<Trigger, { type: 'cron' }>;

/** The last moment a Date holds: next_at of a schedule with no more ticks whose waiting tick still has to run. */
export const MAX_DATE_MS = 8_640_000_000_000_000;

/** At most this many ticks are counted when a schedule catches up (croner takes ~0.1 ms a tick); more are "at least this many". */
const MAX_COUNTED = 1_000;

/**
 * A cron trigger's ticks (docs/scheduler.md), computed by croner in the rule's time zone (UTC by
 * default): 5 fields, or 6 with seconds first. Daylight saving: a time the clocks skip runs once,
 * at the first moment after the gap (02:30 → 03:00 on a spring-forward night); a time the clocks
 * repeat runs once, at its first occurrence; an interval keeps its real interval (cron.test.ts).
 */
function cronOf(trigger: CronTrigger): Cron {
  return new Cron(trigger.schedule, { paused: true, timezone: trigger.timezone ?? 'UTC' });
}

/** The first tick strictly after `afterMs`, or undefined when the schedule has no more. */
export function nextTick(trigger: CronTrigger, afterMs: number): number | undefined {
  return cronOf(trigger).nextRun(new Date(afterMs))?.getTime();
}

/** The next `count` ticks after `afterMs` (for showing a schedule to a person). */
export function nextTicks(trigger: CronTrigger, afterMs: number, count: number): number[] {
  return cronOf(trigger).nextRuns(count, new Date(afterMs)).map((date) => date.getTime());
}

/** What a schedule whose tick `due` has come does at `now`, after `graceMs` of allowed lateness. */
export interface TickPlan {
  /** The tick to run now: the latest one due, if it is within the grace; else none. */
  run: number | undefined;
  /** Ticks that came and went unrun (the service was down): recorded, never run. */
  missed: { count: number; first: number; last: number; atLeast: boolean } | undefined;
  /** The tick to wait for next (undefined: the schedule has no more). */
  next: number | undefined;
}

/** Pure: the ticks from `due` up to `now`: the last within the grace runs once, the others are missed. */
export function planTick(trigger: CronTrigger, due: number, now: number, graceMs: number): TickPlan {
  const cron = cronOf(trigger);
  const after = (ms: number) => cron.nextRun(new Date(ms))?.getTime();
  let count = 1;
  let previous: number | undefined;
  let last = due;
  const step = (tick: number) => {
    previous = last;
    last = tick;
  };
  let next = after(due);
  for (; next !== undefined && next <= now && count < MAX_COUNTED; next = after(next)) {
    count += 1;
    step(next);
  }
  const atLeast = next !== undefined && next <= now;
  if (atLeast) {
    // A long outage of a frequent schedule: the ticks of the grace window only, not every one since.
    for (let tick = after(Math.max(last, now - graceMs - 1)); tick !== undefined && tick <= now; tick = after(tick)) step(tick);
    next = after(now);
  }
  const run = now - last <= graceMs ? last : undefined;
  const unrun = run === undefined ? count : count - 1;
  const missed = unrun === 0 ? undefined : { count: atLeast ? MAX_COUNTED : unrun, first: due, last: run === undefined ? last : previous!, atLeast };
  return { run, missed, next };
}
