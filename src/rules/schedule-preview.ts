import { Type, type Static } from 'typebox';
import { nextTicks } from './cron.js';
import { NEXT_TICKS } from './presenter.js';

export const SchedulePreviewInput = Type.Object({
  schedule: Type.String({ minLength: 1, maxLength: 200, description: 'cron expression: 5 fields, 6 with seconds first, 7 with a year last, or a nickname (@daily...); one that never fires again is refused' }),
  timezone: Type.Optional(Type.String({ minLength: 1, maxLength: 100, description: 'IANA zone; default UTC' })),
  count: Type.Optional(Type.Integer({ minimum: 1, maximum: 50, description: `how many ticks; default ${NEXT_TICKS}` })),
}, { additionalProperties: false });

export const SchedulePreviewView = Type.Object({
  timezone: Type.String(),
  ticks: Type.Array(Type.Object({
    at: Type.String({ format: 'date-time', description: 'the tick, UTC' }),
    local: Type.String({ description: 'the tick as a wall clock of the zone reads it, e.g. "2026-03-29 03:00 GMT+2"' }),
  })),
});

type SchedulePreviewInput = Static<typeof SchedulePreviewInput>;
type SchedulePreviewView = Static<typeof SchedulePreviewView>;

/** The next ticks after `now`, computed as the scheduler computes them (rules/cron.ts). */
export function previewSchedule(input: SchedulePreviewInput, now: number): SchedulePreviewView {
  const timezone = input.timezone ?? 'UTC';
  const wallClock = new Intl.DateTimeFormat('sv-SE', { timeZone: timezone, dateStyle: 'short', timeStyle: 'medium' });
  const zoneName = new Intl.DateTimeFormat('en-GB', { timeZone: timezone, timeZoneName: 'short' });
  const ticks = nextTicks({ type: 'cron', schedule: input.schedule, timezone }, now, input.count ?? NEXT_TICKS).map((ms) => {
    const zone = zoneName.formatToParts(ms).find((part) => part.type === 'timeZoneName')?.value ?? timezone;
    return { at: new Date(ms).toISOString(), local: `${wallClock.format(ms)} ${zone}` };
  });
  return { timezone, ticks };
}
