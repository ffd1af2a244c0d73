import type { ApprovalNotification } from '../notification.js';
import type { SendResult } from './result.js';
import { approvalCard, shownOf, type CardState } from '../teams/approval-card.js';
import type { TeamsBot, TeamsCardRef } from '../teams/bot-settings.js';
import { ConnectorError, type BotConnector } from '../teams/connector.js';

/** Posts an approval request as the bot's card; the delivery keeps where it landed, to update it later. */
export async function sendApprovalCard(connector: BotConnector, bot: TeamsBot, notification: ApprovalNotification): Promise<SendResult> {
  const states = new Map<string, CardState>(notification.executions.map((e) => [e.id, { state: 'awaiting_approval', words: '⏸️ awaiting approval' }]));
  try {
    const activityId = await connector.postCard(bot, approvalCard(notification, states));
    const ref: TeamsCardRef = { serviceUrl: bot.serviceUrl, conversationId: bot.conversationId, activityId, shown: shownOf(notification, states) };
    return { ok: true, status: 'HTTP 201', ref };
  } catch (error) {
    if (!(error instanceof ConnectorError)) throw error;
    return { ok: false, status: error.status === null ? null : `HTTP ${error.status}`, error: error.message, retryable: error.retryable };
  }
}
