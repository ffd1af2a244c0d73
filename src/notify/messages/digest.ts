import type { ApprovalNotification, EscalationNotification, EventRef, ExecutionSummary, Notification, NotRunNotification, RunNotification, Severity, SnapshotRef } from '../notification.js';
import { counted, times } from '../../errors/counts.js';

/**
 * A notification reduced to what every platform shows: a title, a summary, labelled facts, one
 * section per execution and links. All plain text: each platform escapes it its own way.
 * The words are written for someone woken at 3 a.m.: what fired, where, what ran, how it ended.
 */
export interface Digest {
  title: string;
  severity: Severity;
  summary: string;
  facts: Array<[label: string, value: string]>;
  sections: DigestSection[];
  links: Array<{ label: string; url: string }>;
  /** The run's graph snapshots: inline in an e-mail, a signed link in a chat. */
  graphs?: SnapshotRef[];
}

export interface DigestSection {
  heading: string;
  note: string | null;
  /** Output to show as preformatted text; empty when there was none. */
  code: string;
}

const ERROR_STATES = new Set(['failed', 'timed_out', 'lost', 'expired']);

export function digest(notification: Notification): Digest {
  switch (notification.kind) {
    case 'run':
      return runDigest(notification);
    case 'escalation':
      return escalationDigest(notification);
    case 'not_run':
      return notRunDigest(notification);
    case 'approval':
      return approvalDigest(notification);
    case 'runbook':
      return {
        title: `📘 Runbook: ${notification.rule.name}${notification.event.hostName ? ` on ${notification.event.hostName}` : ''}`,
        severity: 'ok',
        summary: `The runbook of rule "${notification.rule.name}" was sent to on-call by email.`,
        facts: eventFacts(notification.event),
        sections: [{ heading: 'Runbook', note: null, code: notification.text }],
        links: links(notification.rule.url, notification.event.url),
      };
    case 'test':
      return {
        title: '🧪 pitcrew test message',
        severity: 'ok',
        summary: `A test from pitcrew for the channel "${notification.channel.name}" (${notification.channel.type}). If you can read this, results and escalations will reach you here.`,
        facts: [['Sent at', notification.sentAt]],
        sections: [],
        links: [],
      };
  }
}

function runDigest(n: RunNotification): Digest {
  const ended = n.total - (n.counts.pending ?? 0);
  const failed = Object.entries(n.counts).filter(([state]) => ERROR_STATES.has(state)).reduce((sum, [, count]) => sum + count, 0);
  const only = n.total === 1 ? n.executions[0] : undefined;
  let title: string;
  if (only) title = `${icon(only.state)} ${n.rule.name} ${stateWords(only.state)} on ${only.hostname}`;
  else if (failed > 0) title = `❌ ${n.rule.name} failed on ${failed} of ${counted(n.total, 'host')}`;
  else if ((n.counts.succeeded ?? 0) === n.total) title = `✅ ${n.rule.name} succeeded on all ${counted(n.total, 'host')}`;
  else title = `ℹ️ ${n.rule.name}: ${ended} of ${counted(n.total, 'host')} finished`;
  if (n.partial) title += ` (${n.counts.pending ?? 0} still running)`;

  const counts = Object.entries(n.counts).filter(([, count]) => count > 0).map(([state, count]) => `${count} ${stateWords(state)}`).join(', ');
  const facts = eventFacts(n.event);
  facts.push(['Ran', n.action]);
  if (n.total > 1) facts.push(['Hosts', `${n.total}: ${counts}`]);
  const sections = n.executions.map(executionSection);
  if (n.unlisted > 0) sections.push({ heading: `… and ${counted(n.unlisted, 'more host')}: see the event`, note: null, code: '' });
  if (n.graphNote) sections.push({ heading: '📈 Graphs', note: n.graphNote, code: '' });
  return { title, severity: n.severity, summary: alertSentence(n.event), facts, sections, links: links(n.rule.url, n.event.url, only?.url ?? null), graphs: n.snapshots ?? [] };
}

function escalationDigest(n: EscalationNotification): Digest {
  const windowEnd = new Date(Date.parse(n.windowStart) + n.limit.windowSeconds * 1000).toISOString();
  const facts: Digest['facts'] = [
    ['Host', n.hostname],
    ['Limit', `${counted(n.limit.max, 'execution')} per ${duration(n.limit.windowSeconds * 1000)}`],
    ['Executions in window', String(n.count)],
    ['Window', `${n.windowStart} to ${windowEnd}`],
  ];
  if (n.event) facts.push(...eventFacts(n.event).filter(([label]) => label !== 'Host'));
  return {
    title: `🚨 Action limit reached: ${n.rule.name} on ${n.hostname}`,
    severity: 'error',
    summary: `pitcrew already ran "${n.rule.name}" ${times(n.count)} on ${n.hostname} within ${duration(n.limit.windowSeconds * 1000)} (limit ${n.limit.max}). Not done: ${n.notDone}. A person must look: pitcrew does not act on this host for this rule again before ${windowEnd}.`,
    facts,
    sections: [],
    links: links(n.rule.url, n.event?.url ?? null),
  };
}

function notRunDigest(n: NotRunNotification): Digest {
  const when = n.scheduledTime ? ` of ${n.scheduledTime}` : '';
  const facts = eventFacts(n.event);
  if (n.scheduledTime) facts.unshift(['Scheduled for', n.scheduledTime]);
  facts.push(['Outcome', n.outcome]);
  return {
    title: `⚠️ ${n.rule.name}: the scheduled run${when} did not run`,
    severity: 'error',
    summary: `pitcrew ran nothing for the tick${when} of "${n.rule.name}": ${n.reason}. The schedule goes on; the next tick runs if a host can take it.`,
    facts,
    sections: [],
    links: links(n.rule.url, n.event.url),
  };
}

function approvalDigest(n: ApprovalNotification): Digest {
  const where = n.total === 1 ? n.executions[0]!.hostname : counted(n.total, 'host');
  if (n.timedOut) return undecidedDigest(n, where);
  const facts = eventFacts(n.event);
  facts.push(['Would run', n.action], ['Who may decide', `${an(n.role)} ${n.role} or above`], ['Decide before', n.deadline]);
  const sections: DigestSection[] = n.executions.map((e) => ({ heading: `⏸️ ${e.hostname}: awaiting approval`, note: e.url ? `Approve or reject: ${e.url}` : `execution ${e.id}`, code: '' }));
  if (n.total > n.executions.length) sections.push({ heading: `… and ${counted(n.total - n.executions.length, 'more host')}: see the event`, note: null, code: '' });
  return {
    title: `⏸️ Approval needed: ${n.rule.name} on ${where}`,
    severity: 'error',
    summary: `${alertSentence(n.event)} "${n.rule.name}" waits for a person's yes before it runs: nothing has run. Approve or reject it on the execution's page before ${n.deadline}; past that it expires and never runs${n.onTimeout === 'escalate' ? ', and the on-call contacts are told' : ''}.`,
    facts,
    sections,
    links: links(n.rule.url, n.event.url, n.total === 1 ? n.executions[0]!.url : null),
  };
}

function undecidedDigest(n: ApprovalNotification, where: string): Digest {
  const facts = eventFacts(n.event);
  facts.push(['Would have run', n.action], ['Who could decide', `${an(n.role)} ${n.role} or above`], ['Deadline', n.deadline]);
  return {
    title: `🚨 Nobody approved: ${n.rule.name} on ${where}`,
    severity: 'error',
    summary: `${alertSentence(n.event)} "${n.rule.name}" waited for a person's yes and nobody approved or rejected it by ${n.deadline}: it expired and never ran. The alert may still need a person: look at it now, and raise it again or use Run now on the rule to run the fix.`,
    facts,
    sections: [],
    links: links(n.rule.url, n.event.url, n.executions[0]?.url ?? null),
  };
}

function an(role: string): string {
  return /^[aeiou]/.test(role) ? 'an' : 'a';
}

function executionSection(e: ExecutionSummary): DigestSection {
  const parts = [stateWords(e.state)];
  if (e.exitCode !== null) parts.push(`exit code ${e.exitCode}`);
  if (e.durationMs !== null) parts.push(`in ${duration(e.durationMs)}`);
  return { heading: `${icon(e.state)} ${e.hostname}: ${parts.join(', ')}`, note: e.reason, code: e.outputTail };
}

function eventFacts(event: EventRef): Digest['facts'] {
  const facts: Digest['facts'] = [];
  if (event.alarmName) facts.push(['Alarm', event.alarmName]);
  if (event.hostName) facts.push(['Host', event.hostName]);
  if (event.severity) facts.push(['Severity', event.severity]);
  if (event.source) facts.push(['Source', event.source]);
  if (event.appName) facts.push(['App', event.appName]);
  facts.push(['Received', event.receivedAt]);
  return facts;
}

function alertSentence(event: EventRef): string {
  const what = event.alarmName ? `Alarm ${event.alarmName}` : 'A trigger';
  const where = event.hostName ? ` for ${event.hostName}` : '';
  const from = event.source ? ` from ${event.source}` : '';
  return `${what}${where}${from} at ${event.receivedAt}.`;
}

function links(rule: string | null, event: string | null, execution: string | null = null): Digest['links'] {
  const out: Digest['links'] = [];
  if (execution) out.push({ label: 'Open execution', url: execution });
  if (event) out.push({ label: 'Open event', url: event });
  if (rule) out.push({ label: 'Open rule', url: rule });
  return out;
}

export function stateWords(state: string): string {
  return state === 'timed_out' ? 'timed out' : state === 'pending' ? 'still running' : state;
}

function icon(state: string): string {
  if (state === 'succeeded') return '✅';
  if (ERROR_STATES.has(state)) return '❌';
  return 'ℹ️';
}

export function duration(ms: number): string {
  if (ms < 1000) return `${ms} ms`;
  if (ms < 60_000) return `${(ms / 1000).toFixed(1)} s`;
  if (ms < 3_600_000) return `${Math.round(ms / 60_000)} min`;
  return `${+(ms / 3_600_000).toFixed(1)} h`;
}
