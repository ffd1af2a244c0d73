import type { FastifyBaseLogger } from 'fastify';
import { PitcrewError } from '../../errors/catalogue.js';
import type { Verdict } from '../../executions/approval-decision.js';
import { approvalStandings, outcomesOf } from '../../executions/approval-outcomes.js';
import type { ExecutionRow } from '../../store/schema.js';
import { approvalRequestOf } from '../approval-request.js';
import { chatMember, decideFromChat, type ChatDecisionDeps } from '../chat-decision.js';
import { slackApprovalMessage } from '../messages/slack-approval.js';
import type { SlackSettings } from '../senders/slack-app.js';
import { callSlack, respondToSlack, type SlackReach } from '../senders/slack-web-api.js';

/** A verified click of Approve or Reject. */
export interface Click {
  tenantId: string;
  executionId: string;
  verdict: Verdict;
  slackUserId: string;
  /** Where the clicker is answered (the payload's response_url); null when Slack sent none. */
  responseUrl: string | null;
  /** The Slack app whose signing secret verified the click: its bot token reads the user. */
  settings: SlackSettings;
  ip: string;
}

export interface ClickDeps extends ChatDecisionDeps {
  reach: SlackReach;
  logger: FastifyBaseLogger;
}

/**
 * Decides a click as the person behind it (docs/approvals.md, "In Slack"): their Slack profile's
 * e-mail (users.info, scope users:read.email: docs.slack.dev/reference/methods/users.info) must be
 * a pitcrew member of the execution's tenant, with the rule's approval role; the decision is
 * decideApproval's, exactly once, recorded with via "slack" in the history and the audit log. The
 * clicker is told how it went: the message replaced with its outcome, or, when nothing was
 * decided, a message only they see saying why.
 */
export async function decideClick(deps: ClickDeps, click: Click): Promise<void> {
  const tell = (text: string) => answer(deps, click, { response_type: 'ephemeral', replace_original: false, text });
  const email = await emailOf(deps, click);
  if ('refusal' in email) return tell(email.refusal);
  const member = await chatMember(deps.db, click.tenantId, email.address);
  if (!member) {
    return tell(`No pitcrew member of this tenant has your Slack e-mail (${email.address}): nothing was ${done(click.verdict)}. Ask an owner to invite that address, or decide in pitcrew.`);
  }
  let row: ExecutionRow;
  try {
    row = await decideFromChat(deps, member, { tenantId: click.tenantId, executionId: click.executionId, verdict: click.verdict, via: 'slack', ip: click.ip });
  } catch (error) {
    if (!(error instanceof PitcrewError)) throw error;
    deps.logger.info({ executionId: click.executionId, email: email.address, verdict: click.verdict, refused: error.code }, 'a Slack click decided nothing');
    return tell(`Nothing was ${done(click.verdict)}: ${error.message}.`);
  }
  deps.logger.info({ executionId: click.executionId, email: email.address, verdict: click.verdict, state: row.state }, 'an approval was decided from Slack');
  await replaceMessage(deps, click, row);
}

function done(verdict: Verdict): string {
  return verdict === 'approve' ? 'approved' : 'rejected';
}

async function emailOf(deps: ClickDeps, click: Click): Promise<{ address: string } | { refusal: string }> {
  const nothing = `nothing was ${done(click.verdict)}`;
  if (!click.slackUserId) return { refusal: `Slack did not say who clicked: ${nothing}.` };
  const info = await callSlack(deps.reach, click.settings.botToken!, 'users.info', { user: click.slackUserId }, true);
  if (!info.ok) return { refusal: `pitcrew could not read your Slack profile (${info.result.error}): ${nothing}. Decide in pitcrew, or ask the app's owner to check its scopes (users:read, users:read.email).` };
  const profile = (info.body.user as { profile?: { email?: unknown } } | undefined)?.profile;
  const found = typeof profile?.email === 'string' ? profile.email.trim().toLowerCase() : '';
  if (!found) return { refusal: `Your Slack profile shows pitcrew no e-mail (the app needs the users:read.email scope): ${nothing}. Decide in pitcrew.` };
  return { address: found };
}

/** The message clicked, shown again with its outcome (response_url, replace_original); a plain answer if the request is gone. */
async function replaceMessage(deps: ClickDeps, click: Click, row: ExecutionRow): Promise<void> {
  const request = await approvalRequestOf(deps.db, row.event_id);
  if (!request) return answer(deps, click, { response_type: 'ephemeral', replace_original: false, text: `${done(click.verdict)} ${row.hostname}` });
  const outcomes = outcomesOf(await approvalStandings(deps.db, request.executions.map((e) => e.id)));
  await answer(deps, click, { replace_original: true, ...slackApprovalMessage({ ...request, outcomes }) });
}

async function answer(deps: ClickDeps, click: Click, body: Record<string, unknown>): Promise<void> {
  if (!click.responseUrl) return;
  const sent = await respondToSlack(deps.reach, click.responseUrl, body);
  if (!sent.ok) deps.logger.warn({ executionId: click.executionId, error: sent.result.error }, "the clicker could not be told through Slack's response_url");
}
