import { approvalTerms } from '../rules/approval.js';
import { advance, type AlarmHistory } from '../engine/alarm-history.js';
import { NO_HISTORY, serviceRunKey, type Decision, type HistoryFacts, type OriginalEvent } from '../engine/decide.js';
import type { SkippedEnv } from './alert.js';
import type { Rule } from '../rules/rule.js';

/** The original of an idempotent call, with what its reply repeats. */
export interface Remembered {
  original: OriginalEvent;
  fingerprint: string;
  skippedEnv: SkippedEnv[];
}

export interface OpenEscalation {
  windowStart: number;
  windowEnd: number;
}

const EMPTY_ALARMS: AlarmHistory = NO_HISTORY.alarms;

/**
 * The history decide() reads, for one group commit: loaded from the database at the start of the
 * transaction, then advanced in memory event by event, so the hundredth event of a storm in one
 * batch sees the ninety-nine before it exactly as if each had committed alone.
 */
export class BatchHistory {
  readonly alarms = new Map<string, AlarmHistory>();
  readonly executions = new Map<string, Map<string, number>>();
  readonly escalations = new Map<string, OpenEscalation>();
  readonly remembered = new Map<string, Remembered>();

  factsFor(rule: Rule, hostKey: string, idempotencyKey: string | undefined): HistoryFacts {
    return {
      original: idempotencyKey === undefined ? undefined : this.remembered.get(pair(rule.id, idempotencyKey))?.original,
      alarms: this.alarms.get(pair(rule.id, hostKey)) ?? EMPTY_ALARMS,
      executionsInWindow: this.executions.get(rule.id) ?? NO_HISTORY.executionsInWindow,
    };
  }

  remembers(ruleId: string, idempotencyKey: string): Remembered | undefined {
    return this.remembered.get(pair(ruleId, idempotencyKey));
  }

  /** Counts a recorded event, so that the next one of the batch sees it. */
  record(rule: Rule, hostKey: string, event: { alarmState?: 'firing' | 'resolved' | undefined; receivedAt: number }, decision: Decision): void {
    if (decision.outcome === 'duplicate') return;
    const key = pair(rule.id, hostKey);
    this.alarms.set(key, advance(this.alarms.get(key) ?? EMPTY_ALARMS, event, decision.outcome === 'flapping'));
    // Runs that wait for a person count in the limit once approved (docs/approvals.md), not now.
    if (decision.outcome !== 'accepted' || approvalTerms(rule)) return;
    const counts = new Map(this.executions.get(rule.id));
    for (const host of [...decision.targets, ...decision.held]) counts.set(host.id, (counts.get(host.id) ?? 0) + 1);
    for (const run of decision.serviceRuns) {
      const key = serviceRunKey(run.about);
      counts.set(key, (counts.get(key) ?? 0) + 1);
    }
    this.executions.set(rule.id, counts);
  }

  remember(ruleId: string, idempotencyKey: string, remembered: Remembered): void {
    this.remembered.set(pair(ruleId, idempotencyKey), remembered);
  }

  /** The escalation window a limited event of (rule, host) belongs to: the open one, or one it opens from now. */
  escalationWindow(ruleId: string, hostId: string, now: number, windowSeconds: number): { window: OpenEscalation; opened: boolean } {
    const key = pair(ruleId, hostId);
    const open = this.escalations.get(key);
    if (open && open.windowEnd > now) return { window: open, opened: false };
    const fresh = { windowStart: now, windowEnd: now + windowSeconds * 1000 };
    this.escalations.set(key, fresh);
    return { window: fresh, opened: true };
  }
}

export function pair(a: string, b: string): string {
  return `${a}\n${b}`;
}
