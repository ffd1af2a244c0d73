import type { ApprovalOutcome } from '../../executions/approval-outcomes.js';
import { digest } from './digest.js';
import { clip, escapeMrkdwn, slackPayload } from './slack.js';
import type { ApprovalNotification } from '../notification.js';

/*
 * The approval request as a Slack app posts it (chat.postMessage), with Approve and Reject buttons
 * per waiting execution. Block Kit (docs.slack.dev/reference/block-kit/block-elements/button-element):
 * a button has an action_id (≤ 255), a value (≤ 2000) sent back in the block_actions payload, an
 * optional style (primary, danger) and confirm dialog (title ≤ 100, text ≤ 300, confirm/deny ≤ 30);
 * an actions block holds at most 25 elements. The value is the execution's id: the interaction
 * route finds the execution, its tenant and that tenant's signing secret from it.
 */

export const APPROVE_ACTION = 'pitcrew_approve';
export const REJECT_ACTION = 'pitcrew_reject';
/** A link button's (the rule, the event): opens a page, decides nothing. */
export const OPEN_ACTION = 'pitcrew_open';

type Block = Record<string, unknown>;

const MARK: Record<ApprovalOutcome['decision'], string> = { approved: '✅', rejected: '❌', expired: '⌛', cancelled: '🚫' };

/** The message: the request's header, summary and facts, then each execution with its buttons, or how it was decided. */
export function slackApprovalMessage(n: ApprovalNotification): { text: string; blocks: Block[] } {
  const base = slackPayload({ ...digest(n), sections: [], links: [] });
  const blocks = [...(base.blocks as Block[])];
  for (const execution of n.executions) blocks.push(...executionBlocks(n, execution, n.outcomes?.[execution.id]));
  if (n.total > n.executions.length) blocks.push({ type: 'context', elements: [{ type: 'mrkdwn', text: `… and ${n.total - n.executions.length} more waiting: decide them in pitcrew` }] });
  const links = [n.rule.url ? { label: 'Rule', url: n.rule.url } : null, n.event.url ? { label: 'Event', url: n.event.url } : null].filter((l) => l !== null);
  // Slack posts a click on a link button to the app too: its value names an execution, so that click is verified like the others (then ignored).
  const first = n.executions[0]?.id ?? '';
  if (links.length > 0) blocks.push({ type: 'actions', elements: links.map((l) => ({ type: 'button', action_id: `${OPEN_ACTION}_${l.label.toLowerCase()}`, value: first, text: { type: 'plain_text', text: l.label }, url: l.url })) });
  return { text: titleOf(n), blocks };
}

/** The fallback text (notifications, screen readers): what is asked, or once all are decided, how it ended. */
function titleOf(n: ApprovalNotification): string {
  const outcomes = n.executions.map((e) => n.outcomes?.[e.id]);
  if (n.executions.length === 1 && outcomes[0]) return `${MARK[outcomes[0].decision]} ${n.rule.name} on ${n.executions[0]!.hostname}: ${outcomes[0].words}`;
  return digest(n).title;
}

function executionBlocks(n: ApprovalNotification, e: ApprovalNotification['executions'][number], outcome: ApprovalOutcome | undefined): Block[] {
  const host = `*${escapeMrkdwn(e.hostname)}*`;
  const page = e.url ? ` · <${e.url}|open in pitcrew>` : ` · execution ${e.id}`;
  if (outcome) {
    return [{ type: 'section', text: { type: 'mrkdwn', text: clip(`${MARK[outcome.decision]} ${host}: ${escapeMrkdwn(outcome.words)}${page}`, 3000) } }];
  }
  return [
    { type: 'section', text: { type: 'mrkdwn', text: `⏸️ ${host}: awaiting approval${page}` } },
    {
      type: 'actions',
      block_id: `pitcrew:${e.id}`,
      elements: [
        {
          type: 'button', action_id: APPROVE_ACTION, value: e.id, style: 'primary', text: { type: 'plain_text', text: 'Approve' },
          // A slip of the thumb must not run a destructive fix.
          confirm: {
            title: { type: 'plain_text', text: 'Run it?' },
            text: { type: 'plain_text', text: clip(`${n.action} on ${e.hostname}. It runs once, now.`, 300) },
            confirm: { type: 'plain_text', text: 'Approve' },
            deny: { type: 'plain_text', text: 'Not yet' },
            style: 'primary',
          },
        },
        { type: 'button', action_id: REJECT_ACTION, value: e.id, style: 'danger', text: { type: 'plain_text', text: 'Reject' } },
      ],
    },
  ];
}
