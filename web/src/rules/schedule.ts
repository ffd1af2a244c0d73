import type { Overlap, SchedulePreviewInput } from '../api/types';

/*
 * Cron schedules as the UI shows them: the overlap choices, the time zones, a tick as the wall
 * clock of the rule's zone reads it, and the common expressions in words. The service reads the
 * schedule (croner, src/rules/cron.ts); nothing here decides when a rule fires.
 */

export const OVERLAPS: Record<Overlap, { title: string; text: string }> = {
  skip: { title: 'Skip', text: 'A tick while the previous run goes on is recorded, and runs nothing (the default).' },
  queue: { title: 'Queue', text: 'A tick while the previous run goes on waits for it to end, then runs; one tick waits at most.' },
  allow: { title: 'Allow', text: 'Every tick runs, even while the previous run goes on.' },
};

/** The zone this browser is in, the wizard's default. */
export function browserTimeZone(): string {
  try {
    return Intl.DateTimeFormat().resolvedOptions().timeZone || 'UTC';
  } catch {
    return 'UTC';
  }
}

/** The IANA zones this browser knows, for the zone field's suggestions; empty where it cannot list them. */
export function knownTimeZones(): string[] {
  const supported = typeof Intl.supportedValuesOf === 'function' ? Intl.supportedValuesOf('timeZone') : [];
  return supported.length === 0 || supported.includes('UTC') ? supported : ['UTC', ...supported];
}

const wallClocks = new Map<string, { wall: Intl.DateTimeFormat; zone: Intl.DateTimeFormat }>();

/**
 * A tick as the wall clock of `timeZone` reads it, with the zone's abbreviation: "2026-11-26
 * 03:00:00 CET", the same shape as the preview's `local` (src/rules/schedule-preview.ts).
 */
export function wallClock(iso: string, timeZone: string): string {
  let formats = wallClocks.get(timeZone);
  if (!formats) {
    try {
      formats = {
        wall: new Intl.DateTimeFormat('sv-SE', { timeZone, dateStyle: 'short', timeStyle: 'medium' }),
        zone: new Intl.DateTimeFormat('en-GB', { timeZone, timeZoneName: 'short' }),
      };
    } catch {
      // A zone this browser does not know (the service checked it): UTC says the same instant.
      return `${iso.replace('T', ' ').replace(/\.\d+Z$/, '')} UTC`;
    }
    wallClocks.set(timeZone, formats);
  }
  const at = Date.parse(iso);
  const zone = formats.zone.formatToParts(at).find((part) => part.type === 'timeZoneName')?.value ?? timeZone;
  return `${formats.wall.format(at)} ${zone}`;
}

/** What the preview is asked for a schedule as typed: the expression and the zone trimmed (no zone: UTC); null while the expression is empty. */
export function previewInputOf(form: { schedule: string; timezone: string }): SchedulePreviewInput | null {
  const schedule = form.schedule.trim();
  const timezone = form.timezone.trim();
  return schedule ? { schedule, ...(timezone ? { timezone } : {}) } : null;
}

/** The wizard field a schedule preview's error is about: its pointers are /schedule or /timezone (/body/… from the schema). */
export function previewFieldOf(path: string): 'schedule' | 'timezone' | undefined {
  const field = path.replace(/^\/body/, '').split('/')[1];
  return field === 'schedule' || field === 'timezone' ? field : undefined;
}

const NICKNAMES: Record<string, string> = {
  '@yearly': 'every year on 1 January at 00:00',
  '@annually': 'every year on 1 January at 00:00',
  '@monthly': 'on day 1 of every month at 00:00',
  '@weekly': 'every Sunday at 00:00',
  '@daily': 'every day at 00:00',
  '@midnight': 'every day at 00:00',
  '@hourly': 'every hour at minute 0',
};

const DAYS = ['Sunday', 'Monday', 'Tuesday', 'Wednesday', 'Thursday', 'Friday', 'Saturday'];
const DAY_NAMES = ['SUN', 'MON', 'TUE', 'WED', 'THU', 'FRI', 'SAT'];

/**
 * The common cron expressions in words ("every 5 minutes", "Monday to Friday at 09:30"); null for
 * the others, which the UI shows as written. Months other than every month are not put in words.
 */
export function scheduleInWords(expression: string): string | null {
  const text = expression.trim();
  if (text.startsWith('@')) return NICKNAMES[text.toLowerCase()] ?? null;
  const fields = text.split(/\s+/);
  if (fields.length !== 5 && fields.length !== 6) return null;
  const [second, minute, hour, dayOfMonth, month, dayOfWeek] = fields.length === 6 ? fields : ['0', ...fields];
  if (month !== '*' || (dayOfMonth !== '*' && dayOfWeek !== '*')) return null;
  const days = dayOfWeek !== '*' ? weekdaysInWords(dayOfWeek!) : dayOfMonth !== '*' ? monthDaysInWords(dayOfMonth!) : '';
  if (days === null) return null;

  const clock = clockInWords(second!, minute!, hour!);
  if (clock !== null) return `${days || 'every day'} at ${clock}`;
  const often = intervalInWords(second!, minute!, hour!);
  if (often === null) return null;
  return days ? `${often}, ${days}` : often;
}

function whole(text: string, max: number): number | null {
  if (!/^\d{1,2}$/.test(text)) return null;
  const n = Number(text);
  return n <= max ? n : null;
}

const two = (n: number) => String(n).padStart(2, '0');

/** "09:30", "02:30 and 14:30": fixed times of day. */
function clockInWords(second: string, minute: string, hour: string): string | null {
  const s = whole(second, 59);
  const m = whole(minute, 59);
  const hours = hour.split(',').map((h) => whole(h, 23));
  if (s === null || m === null || hours.some((h) => h === null)) return null;
  const times = (hours as number[]).map((h) => `${two(h)}:${two(m)}${s === 0 ? '' : `:${two(s)}`}`);
  return list(times);
}

/** "every 5 minutes", "every hour at minute 15": ticks through the day. */
function intervalInWords(second: string, minute: string, hour: string): string | null {
  const step = (field: string, max: number) => (field === '*' ? 1 : field.startsWith('*/') ? whole(field.slice(2), max) : null);
  const every = (n: number, unit: string) => (n === 1 ? `every ${unit}` : `every ${n} ${unit}s`);
  if (minute === '*' && hour === '*') {
    const n = step(second, 59);
    if (n !== null && n > 0) return every(n, 'second');
    const s = whole(second, 59);
    return s === null ? null : s === 0 ? 'every minute' : `every minute at second ${s}`;
  }
  const s = whole(second, 59);
  if (s === null) return null;
  const atSecond = s === 0 ? '' : ` at second ${s}`;
  if (hour === '*') {
    const n = step(minute, 59);
    if (n !== null && n > 0) return `${every(n, 'minute')}${atSecond}`;
  }
  const m = whole(minute, 59);
  const h = step(hour, 23);
  if (m === null || h === null || h === 0) return null;
  return `${every(h, 'hour')} at minute ${m}${atSecond}`;
}

function dayOfWeek(token: string): number | null {
  const byName = DAY_NAMES.indexOf(token.toUpperCase());
  if (byName >= 0) return byName;
  const n = whole(token, 7);
  return n === null ? null : n % 7;
}

/** "every Monday", "Monday to Friday", "Monday, Wednesday and Friday". */
function weekdaysInWords(field: string): string | null {
  const range = /^(\w+)-(\w+)$/.exec(field);
  if (range) {
    const from = dayOfWeek(range[1]!);
    const to = dayOfWeek(range[2]!);
    return from === null || to === null ? null : `${DAYS[from]} to ${DAYS[to]}`;
  }
  const days = field.split(',').map(dayOfWeek);
  if (days.some((d) => d === null)) return null;
  const names = (days as number[]).map((d) => DAYS[d]!);
  return names.length === 1 ? `every ${names[0]}` : list(names);
}

/** "on day 1 of every month", "on the last day of every month". */
function monthDaysInWords(field: string): string | null {
  if (field === 'L') return 'on the last day of every month';
  const days = field.split(',').map((d) => whole(d, 31));
  if (days.some((d) => d === null || d === 0)) return null;
  return `on ${days.length === 1 ? 'day' : 'days'} ${list(days.map(String))} of every month`;
}

function list(items: string[]): string {
  return items.length <= 1 ? (items[0] ?? '') : `${items.slice(0, -1).join(', ')} and ${items.at(-1)}`;
}
