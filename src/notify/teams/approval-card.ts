import type { ApprovalStanding } from '../../executions/approval-outcomes.js';
import { digest } from '../messages/digest.js';
import type { ApprovalNotification } from '../notification.js';

/*
 * The approval request as a Teams bot posts it: an Adaptive Card 1.4 whose Approve and Reject are
 * Action.Execute (Universal Actions): a click reaches the bot as an invoke activity named
 * adaptiveCard/action carrying the verb and data, and the bot answers with the card to show
 * instead. https://learn.microsoft.com/en-us/microsoftteams/platform/task-modules-and-cards/cards/universal-actions-for-adaptive-cards/work-with-universal-actions-for-adaptive-cards
 * and https://adaptivecards.io/explorer/Action.Execute.html
 */

export const APPROVE_VERB = 'approve';
export const REJECT_VERB = 'reject';

/** Where one execution of the request stands, in words for the card. */
export interface CardState {
  state: string;
  words: string;
}

/** How the request's executions stand (executions/approval-outcomes.ts), each in words for the card. */
export function cardStates(standings: Map<string, ApprovalStanding>): Map<string, CardState> {
  return new Map([...standings].map(([id, standing]) => [id, { state: standing.state, words: wordsOf(standing) }]));
}

function wordsOf({ state, reason, outcome }: ApprovalStanding): string {
  const approval = outcome?.decision === 'approved' ? outcome.words : null;
  switch (state) {
    case 'awaiting_approval':
      return '⏸️ awaiting approval';
    case 'rejected':
      return `⛔ ${reason ?? 'rejected'}: it never ran`;
    case 'expired':
      return approval ? `✅ ${approval}; then expired: ${reason ?? 'no agent took it'}` : `⌛ expired undecided, never ran${reason ? ` (${reason})` : ''}`;
    case 'cancelled':
      return approval ? `✅ ${approval}; then cancelled` : '🚫 cancelled, never ran';
    default:
      return `✅ ${approval ?? 'approved'}; now ${state.replace(/_/g, ' ')}`;
  }
}

/** A signature of what the card shows, to tell whether it needs updating. */
export function shownOf(notification: ApprovalNotification, states: Map<string, CardState>): string {
  return notification.executions.map((e) => `${e.id}=${states.get(e.id)?.words ?? 'gone'}`).join(';');
}

/** Whether nothing on the card can change any more by a decision. */
export function allDecided(notification: ApprovalNotification, states: Map<string, CardState>): boolean {
  return notification.executions.every((e) => (states.get(e.id)?.state ?? 'gone') !== 'awaiting_approval');
}

/**
 * The card: the request's words, then each host with Approve and Reject while it waits, or how it
 * ended once decided; `note` (a refusal, to the person who clicked) above the hosts.
 */
export function approvalCard(notification: ApprovalNotification, states: Map<string, CardState>, note?: { text: string; attention: boolean }): Record<string, unknown> {
  const d = digest(notification);
  const open = !allDecided(notification, states);
  const body: Array<Record<string, unknown>> = [
    { type: 'TextBlock', text: open ? d.title : d.title.replace(/^⏸️ Approval needed/, 'Decided'), weight: 'Bolder', size: 'Medium', wrap: true, color: open ? 'Attention' : 'Default' },
    { type: 'TextBlock', text: open ? d.summary : 'Every run this card asked about is decided or ended: see each host below.', wrap: true },
    { type: 'FactSet', facts: d.facts.map(([title, value]) => ({ title, value })) },
  ];
  if (note) body.push({ type: 'TextBlock', text: note.text, wrap: true, weight: 'Bolder', color: note.attention ? 'Attention' : 'Good', separator: true });
  for (const e of notification.executions) {
    const state = states.get(e.id) ?? { state: 'gone', words: 'no longer in pitcrew' };
    body.push({ type: 'TextBlock', text: `${e.hostname}: ${state.words}`, wrap: true, separator: true });
    if (state.state === 'awaiting_approval') {
      body.push({
        type: 'ActionSet',
        actions: [
          { type: 'Action.Execute', title: `Approve on ${e.hostname}`, verb: APPROVE_VERB, data: { executionId: e.id }, style: 'positive' },
          { type: 'Action.Execute', title: 'Reject', verb: REJECT_VERB, data: { executionId: e.id }, style: 'destructive' },
        ],
      });
    }
  }
  if (notification.total > notification.executions.length) body.push({ type: 'TextBlock', text: `… and ${notification.total - notification.executions.length} more: decide them on the event's page`, wrap: true, isSubtle: true });
  const card: Record<string, unknown> = { $schema: 'http://adaptivecards.io/schemas/adaptive-card.json', type: 'AdaptiveCard', version: '1.4', msteams: { width: 'Full' }, body };
  if (d.links.length > 0) card.actions = d.links.map((link) => ({ type: 'Action.OpenUrl', title: link.label, url: link.url }));
  return card;
}

/** A card for a click that has no request to show (its execution is unknown here). */
export function noticeCard(text: string): Record<string, unknown> {
  return { $schema: 'http://adaptivecards.io/schemas/adaptive-card.json', type: 'AdaptiveCard', version: '1.4', body: [{ type: 'TextBlock', text, wrap: true, weight: 'Bolder', color: 'Attention' }] };
}
