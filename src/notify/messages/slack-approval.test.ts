import { describe, expect, it } from 'vitest';
import type { ApprovalOutcome } from '../../executions/approval-outcomes.js';
import type { ApprovalNotification } from '../notification.js';
import { APPROVE_ACTION, slackApprovalMessage } from './slack-approval.js';

const request: ApprovalNotification = {
  kind: 'approval', severity: 'error', rule: { id: 'r1', name: 'reboot db', url: null }, event: { id: 'ev1', receivedAt: '2026-11-29T17:00:00.000Z', url: null },
  action: 'autofix script (sh): reboot', role: 'operator', deadline: '2026-11-29T18:00:00.000Z', onTimeout: 'expire',
  executions: [{ id: 'e1', hostname: 'db-1', url: null }], total: 1,
};
const buttons = (message: { blocks: Array<Record<string, unknown>> }) => message.blocks.flatMap((b) => (b.elements as Array<{ action_id?: string }> | undefined) ?? []).filter((e) => e.action_id === APPROVE_ACTION);

// Every way out of the wait (executions/approval-outcomes.test.ts derives them), as the message shows it.
describe('slackApprovalMessage', () => {
  it('asks with buttons while it waits', () => {
    expect(buttons(slackApprovalMessage(request))).toHaveLength(1);
  });

  it.each<[ApprovalOutcome, string]>([
    [{ decision: 'approved', words: 'approved by ana@example.com (slack): go' }, '✅'],
    [{ decision: 'rejected', words: 'rejected by bo@example.com (api): not now' }, '❌'],
    [{ decision: 'expired', words: 'nobody approved or rejected it within 5 min' }, '⌛'],
    [{ decision: 'cancelled', words: 'cancelled' }, '🚫'],
  ])('shows %j in place of the buttons', (outcome, mark) => {
    const message = slackApprovalMessage({ ...request, outcomes: { e1: outcome } });
    expect(buttons(message)).toEqual([]);
    expect(message.text).toBe(`${mark} reboot db on db-1: ${outcome.words}`);
    expect(JSON.stringify(message.blocks)).toContain(`${mark} *db-1*: ${outcome.words}`);
  });
});
