import type { ApprovalOutcome } from '../executions/approval-outcomes.js';

/**
 * What pitcrew tells people, independent of the channel that carries it. Built once from durable
 * records and stored with its message (notify_messages.body), so every retry sends the same thing;
 * messages/ turns it into each platform's payload.
 */
export type Notification = RunNotification | EscalationNotification | NotRunNotification | RunbookNotification | TestNotification | ApprovalNotification;

export type Severity = 'ok' | 'error';

export interface RuleRef {
  id: string;
  name: string;
  /** Link to the rule in the UI; null when PITCREW_PUBLIC_URL is not set. */
  url: string | null;
}

export interface EventRef {
  id: string;
  receivedAt: string;
  /** The payload fields people recognise an alert by (absent when the payload had none). */
  alarmName?: string;
  severity?: string;
  hostName?: string;
  source?: string;
  appName?: string;
  url: string | null;
}

export interface ExecutionSummary {
  id: string;
  hostname: string;
  state: string;
  exitCode: number | null;
  reason: string | null;
  durationMs: number | null;
  /** The last lines of output, stderr after stdout when both have some. */
  outputTail: string;
  url: string | null;
}

/** The result of one fan-out run: every execution of one event, in one message. */
export interface RunNotification {
  kind: 'run';
  severity: Severity;
  rule: RuleRef;
  event: EventRef;
  /** What ran, in a few words: "autofix script (sh): systemctl restart nginx". */
  action: string;
  /** How many of the run's executions ended in each state, and how many had not ended yet. */
  counts: Record<string, number>;
  total: number;
  /** The executions this message reports (failures first, at most MAX_LISTED). */
  executions: ExecutionSummary[];
  /** Executions ended but not listed, to keep the message short. */
  unlisted: number;
  /** True when sent after the grouping wait with some hosts still running. */
  partial: boolean;
  /** The event's graph snapshots ready when the message was built (absent in messages from before them). */
  snapshots?: SnapshotRef[];
  /** Why a fix's companion capture ("capture graphs too") gave no pictures yet, in words; absent when it did. */
  graphNote?: string;
}

/** A graph snapshot a message shows: inline in an e-mail, by its signed link in a chat. */
export interface SnapshotRef {
  id: string;
  title: string;
  contentType: string;
  width: number;
  height: number;
  bytes: number;
  /** The signed link that opens the image without a session, until it expires; null without PITCREW_PUBLIC_URL. */
  url: string | null;
}

export interface EscalationNotification {
  kind: 'escalation';
  severity: 'error';
  rule: RuleRef;
  hostname: string;
  limit: { max: number; windowSeconds: number };
  /** Executions counted in the window when the limit stopped the action. */
  count: number;
  windowStart: string;
  /** What pitcrew did not do, in words. */
  notDone: string;
  event: EventRef | null;
}

/**
 * A scheduled tick that ran nothing because nothing could run it (no online host of its target):
 * nobody waits on a reply for a tick, so people are told (docs/scheduler.md).
 */
export interface NotRunNotification {
  kind: 'not_run';
  severity: 'error';
  rule: RuleRef;
  event: EventRef;
  /** The event's outcome: no_target. */
  outcome: string;
  /** Why, in the event's words. */
  reason: string;
  /** The time the tick was scheduled for, ISO 8601. */
  scheduledTime: string | null;
}

/** The email_runbook action: the rule's runbook, filled in from the event, to on-call. */
export interface RunbookNotification {
  kind: 'runbook';
  severity: 'ok';
  rule: RuleRef;
  event: EventRef;
  executionId: string;
  subject: string;
  html: string;
  text: string;
  /** Placeholders the event did not fill. */
  missing: string[];
}

/**
 * A run waits for a person's yes (docs/approvals.md): what would run, where, the alert that asked,
 * who may decide and until when. Routed as an error: it needs a person, as an error does.
 */
export interface ApprovalNotification {
  kind: 'approval';
  severity: 'error';
  rule: RuleRef;
  event: EventRef;
  /** What would run, in a few words: "autofix script (sh): systemctl restart nginx". */
  action: string;
  /** The least role that may decide. */
  role: 'operator' | 'admin';
  /** When it ends unless someone decides, ISO 8601. */
  deadline: string;
  onTimeout: 'expire' | 'escalate';
  /**
   * The event's executions waiting (at most MAX_LISTED), each with its page and, for e-mails only,
   * its signed link to the page that asks to confirm (null without PITCREW_PUBLIC_URL).
   */
  executions: Array<{ id: string; hostname: string; url: string | null; decideUrl?: string | null }>;
  /** How many of the event's executions wait, listed or not. */
  total: number;
  /** Set on the escalation of one nobody decided in time (`onTimeout: "escalate"`): it expired unrun. */
  timedOut?: boolean;
  /** Set on the update of a chat message that asked (notify/slack/outcome-updates.ts): how each listed execution was decided, by id; absent ones still wait. */
  outcomes?: Record<string, ApprovalOutcome>;
}

export interface TestNotification {
  kind: 'test';
  severity: 'ok';
  channel: { id: string; name: string; type: string };
  sentAt: string;
}

/** Output lines and characters kept in a message: enough to see what went wrong, not a log dump. */
export const TAIL_LINES = 15;
export const TAIL_CHARS = 1500;
export const MAX_LISTED = 10;

/** The last lines of a text, at most TAIL_LINES lines and TAIL_CHARS characters. */
export function tail(text: string): string {
  const lines = text.replace(/\s+$/, '').split('\n');
  let kept = lines.slice(-TAIL_LINES).join('\n');
  if (kept.length > TAIL_CHARS) kept = `…${kept.slice(-TAIL_CHARS)}`;
  else if (lines.length > TAIL_LINES) kept = `…\n${kept}`;
  return kept;
}
