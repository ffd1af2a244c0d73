import { describe, expect, it } from 'vitest';
import type { ApprovalStanding } from '../../executions/approval-outcomes.js';
import type { ApprovalNotification } from '../notification.js';
import { allDecided, approvalCard, cardStates } from './approval-card.js';

const APPROVED = 'approved by ana@example.com (teams): go';
const REJECTED = 'rejected by bo@example.com (api): not now';
const UNDECIDED = "nobody approved or rejected it within 5 min (the rule's approval.timeoutSeconds); it never ran";
const approved = (state: string, reason: string | null = null): ApprovalStanding => ({ state, reason, outcome: { decision: 'approved', words: APPROVED } });

// Every state the card shows (executions/approval-outcomes.test.ts derives them), in the card's words.
const CASES: Array<[ApprovalStanding, string]> = [
  [{ state: 'awaiting_approval', reason: 'waits for approval', outcome: null }, '⏸️ awaiting approval'],
  [approved('queued'), `✅ ${APPROVED}; now queued`],
  [approved('running'), `✅ ${APPROVED}; now running`],
  [approved('timed_out', 'timed out'), `✅ ${APPROVED}; now timed out`],
  [approved('expired', 'no agent took it in 10 min'), `✅ ${APPROVED}; then expired: no agent took it in 10 min`],
  [approved('expired'), `✅ ${APPROVED}; then expired: no agent took it`],
  [approved('cancelled', 'cancelled by ana'), `✅ ${APPROVED}; then cancelled`],
  [{ state: 'rejected', reason: REJECTED, outcome: { decision: 'rejected', words: REJECTED } }, `⛔ ${REJECTED}: it never ran`],
  [{ state: 'expired', reason: UNDECIDED, outcome: { decision: 'expired', words: UNDECIDED } }, `⌛ expired undecided, never ran (${UNDECIDED})`],
  [{ state: 'cancelled', reason: null, outcome: { decision: 'cancelled', words: 'cancelled' } }, '🚫 cancelled, never ran'],
];

describe('cardStates', () => {
  it.each(CASES)('%j reads "%s"', (standing, words) => {
    expect(cardStates(new Map([['e1', standing]]))).toEqual(new Map([['e1', { state: standing.state, words }]]));
  });
});

describe('approvalCard', () => {
  const notification: ApprovalNotification = {
    kind: 'approval', severity: 'error', rule: { id: 'r1', name: 'reboot db', url: null }, event: { id: 'ev1', receivedAt: '2026-11-29T17:00:00.000Z', url: null },
    action: 'autofix script (sh): reboot', role: 'operator', deadline: '2026-11-29T18:00:00.000Z', onTimeout: 'expire',
    executions: [{ id: 'e1', hostname: 'db-1', url: null }, { id: 'e2', hostname: 'db-2', url: null }], total: 2,
  };
  const buttons = (card: Record<string, unknown>) => (card.body as Array<{ actions?: Array<{ data: { executionId: string } }> }>).flatMap((b) => b.actions ?? []).map((a) => a.data.executionId);

  it('keeps the buttons of those that wait, and shows the others in their words', () => {
    const states = cardStates(new Map([['e1', CASES[0]![0]], ['e2', CASES[7]![0]]]));
    expect(allDecided(notification, states)).toBe(false);
    expect(buttons(approvalCard(notification, states))).toEqual(['e1', 'e1']);
    expect(JSON.stringify(approvalCard(notification, states))).toContain(`db-2: ⛔ ${REJECTED}: it never ran`);
  });

  it('is decided once none waits, and shows one gone as no longer in pitcrew', () => {
    const states = cardStates(new Map([['e1', CASES[1]![0]]]));
    expect(allDecided(notification, states)).toBe(true);
    expect(buttons(approvalCard(notification, states))).toEqual([]);
    expect(JSON.stringify(approvalCard(notification, states))).toContain('db-2: no longer in pitcrew');
  });
});
