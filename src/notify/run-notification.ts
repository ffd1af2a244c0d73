import { ACTIVE_STATES, type ExecutionState } from '../executions/states.js';
import type { EventRow, ExecutionRow } from '../store/schema.js';
import type { UiLinks } from './links.js';
import { MAX_LISTED, tail, type EventRef, type ExecutionSummary, type RunNotification } from './notification.js';

const ERROR_STATES: ReadonlySet<string> = new Set<ExecutionState>(['failed', 'timed_out', 'lost', 'expired']);
const FIELD_CHARS = 200;

/** What a run's message is counted from: a fan-out over a fleet has thousands of these. */
export type RunMember = Pick<ExecutionRow, 'id' | 'state' | 'hostname'>;

/**
 * The ended executions a message lists (failures first, then by host name, at most MAX_LISTED):
 * only these are read whole, output included, whatever the size of the run.
 */
export function listedOf(members: readonly RunMember[], ended: ReadonlySet<string>): string[] {
  const reported = members.filter((e) => ended.has(e.id));
  reported.sort((a, b) => Number(ERROR_STATES.has(b.state)) - Number(ERROR_STATES.has(a.state)) || a.hostname.localeCompare(b.hostname));
  return reported.slice(0, MAX_LISTED).map((e) => e.id);
}

/**
 * The message for one fan-out run (pure): every execution of the event counted by state, and
 * the executions that ended since the last message about it listed, failures first.
 * `ended` are the ids this message reports; the others were reported before or are still running.
 * `listed`: the rows of `listedOf(members, ended)`, in any order.
 */
export function runNotification(rule: { id: string; name: string }, event: EventRow, members: readonly RunMember[], ended: ReadonlySet<string>, listed: readonly ExecutionRow[], links: UiLinks, describe: DescribeAction): RunNotification {
  const counts: Record<string, number> = {};
  for (const e of members) {
    const key = ACTIVE_STATES.includes(e.state as ExecutionState) ? 'pending' : e.state;
    counts[key] = (counts[key] ?? 0) + 1;
  }
  const reported = members.filter((e) => ended.has(e.id));
  const byId = new Map(listed.map((e) => [e.id, e]));
  const rows = listedOf(members, ended).map((id) => byId.get(id)!);
  return {
    kind: 'run',
    severity: reported.some((e) => ERROR_STATES.has(e.state)) ? 'error' : 'ok',
    rule: { id: rule.id, name: rule.name, url: links.rule(rule.id) },
    event: eventRef(event, links),
    // Every execution of an event runs the same action.
    action: actionWords(rows[0]?.spec, describe),
    counts,
    total: members.length,
    executions: rows.map((e) => summary(e, links)),
    unlisted: reported.length - rows.length,
    partial: (counts.pending ?? 0) > 0,
  };
}

export function eventRef(event: EventRow, links: UiLinks): EventRef {
  const payload = JSON.parse(event.payload) as Record<string, unknown>;
  const field = (...names: string[]) => {
    for (const name of names) {
      const value = payload[name];
      if (value !== undefined && value !== null && typeof value !== 'object') return String(value).slice(0, FIELD_CHARS);
    }
    return undefined;
  };
  const ref: EventRef = { id: event.id, receivedAt: new Date(event.received_at).toISOString(), url: links.event(event.id) };
  const fields: Array<[keyof EventRef, string | undefined]> = [
    ['alarmName', field('AlarmName')],
    ['severity', field('Severity')],
    ['hostName', field('HostName', 'hostname')],
    ['source', field('Source')],
    ['appName', field('AppName', 'application')],
  ];
  for (const [key, value] of fields) if (value) (ref as unknown as Record<string, string>)[key] = value;
  return ref;
}

function summary(e: ExecutionRow, links: UiLinks): ExecutionSummary {
  const out = e.stdout.trim() ? tail(e.stdout) : '';
  const err = e.stderr.trim() ? tail(e.stderr) : '';
  return {
    id: e.id,
    hostname: e.hostname,
    state: e.state,
    exitCode: e.exit_code,
    reason: e.reason,
    durationMs: e.started_at !== null && e.finished_at !== null ? e.finished_at - e.started_at : null,
    outputTail: out && err ? `${out}\n--- stderr ---\n${err}` : out || err,
    url: links.execution(e.id),
  };
}

/** An execution's spec in words, by its action kind (actions/kinds.ts): "autofix script (sh): systemctl restart nginx". */
export type DescribeAction = (spec: { kind?: string; timeoutSeconds: number } & Record<string, unknown>) => string;

function actionWords(spec: string | undefined, describe: DescribeAction): string {
  return spec ? describe(JSON.parse(spec) as Parameters<DescribeAction>[0]) : 'nothing';
}
