import type { CronTrigger } from '../rules/cron.js';
import type { AlertPayload } from './alert.js';

/**
 * What a cron rule's tick gives the runbook: the time it was scheduled for, and the zone its
 * schedule is read in (docs/schedules.md). The scheduler's ticks and a person's Run now of a cron
 * rule (its time: when asked) both give it.
 */
export function tickPayload(trigger: CronTrigger, tick: number): AlertPayload {
  const timezone = trigger.timezone ?? 'UTC';
  const scheduledTime = new Date(tick).toISOString();
  return {
    raw: { schedule: trigger.schedule, timezone, scheduledTime },
    hostName: undefined,
    appName: undefined,
    alarmName: undefined,
    severity: undefined,
    source: 'cron',
    act: true,
    alarmState: undefined,
    env: { PITCREW_SCHEDULED_TIME: scheduledTime, PITCREW_SCHEDULE_TIMEZONE: timezone },
    skippedEnv: [],
  };
}
