import type { FastifyBaseLogger } from 'fastify';
import type { Kysely } from 'kysely';
import { approvalStandings } from '../../executions/approval-outcomes.js';
import type { SecretBox } from '../../identity/secret-box.js';
import type { Database } from '../../store/schema.js';
import { openChannel } from '../channels.js';
import type { ApprovalNotification } from '../notification.js';
import { allDecided, approvalCard, cardStates, shownOf } from './approval-card.js';
import { teamsBotOf, type TeamsCardRef } from './bot-settings.js';
import { ConnectorError, type BotConnector } from './connector.js';
import { preparedQuery } from '../../store/prepared.js';

const CARDS_PER_PASS = 50;

export interface CardRefreshDeps {
  db: Kysely<Database>;
  box: SecretBox;
  connector: BotConnector;
  logger: FastifyBaseLogger;
}

/**
 * A notifier duty: the approval cards a Teams bot posted show how their runs stand, whoever decided
 * (UI, API, e-mail, Slack, Teams) or when nobody did (the deadline passed). Each open card is
 * compared with its runs' states; one that changed is replaced (PUT on the connector), and a card
 * whose runs are all decided is settled and read no more. Two nodes may both update one card: the
 * same card twice, which Teams shows once.
 */
export async function refreshTeamsCards(deps: CardRefreshDeps): Promise<number> {
  const { db } = deps;
  // Channels with a bot first (few, and usually none): the deliveries are then read by channel (its index).
  const bots = await teamsBots(db);
  if (bots.length === 0) return 0;
  const open = await db.selectFrom('notify_deliveries as d')
    .innerJoin('notify_messages as m', 'm.id', 'd.message_id')
    .select(['d.id', 'd.channel_id', 'd.message_ref', 'm.body'])
    .where('d.channel_id', 'in', bots.map((b) => b.id)).where('m.kind', '=', 'approval').where('d.message_ref', 'is not', null)
    .where('d.message_ref', 'not like', '%"settled":true%')
    .orderBy('d.id').limit(CARDS_PER_PASS).execute();
  let updated = 0;
  for (const card of open) {
    if (await refreshOne(deps, card.id, card.channel_id, JSON.parse(card.message_ref!) as TeamsCardRef, JSON.parse(card.body) as ApprovalNotification)) updated += 1;
  }
  return updated;
}

async function refreshOne(deps: CardRefreshDeps, deliveryId: string, channelId: string, ref: TeamsCardRef, notification: ApprovalNotification): Promise<boolean> {
  const states = cardStates(await approvalStandings(deps.db, notification.executions.map((e) => e.id)));
  const shown = shownOf(notification, states);
  if (shown === ref.shown) return false;
  const settled = allDecided(notification, states);
  const channel = await deps.db.selectFrom('notify_channels').selectAll().where('id', '=', channelId).executeTakeFirst();
  const bot = channel ? teamsBotOf(openChannel(deps.box, channel)) : null;
  if (!bot) return keep(deps, deliveryId, { ...ref, settled: true });
  try {
    await deps.connector.updateCard(bot, ref, approvalCard(notification, states));
  } catch (error) {
    if (!(error instanceof ConnectorError)) throw error;
    deps.logger.warn({ channelId, deliveryId, error: error.message }, error.retryable ? 'the Teams approval card could not be updated; tried again next pass' : 'the Teams approval card could not be updated; it is left as it was');
    if (!error.retryable) await keep(deps, deliveryId, { ...ref, settled: true });
    return false;
  }
  await keep(deps, deliveryId, { ...ref, shown, settled });
  return true;
}

async function keep(deps: CardRefreshDeps, deliveryId: string, ref: TeamsCardRef): Promise<boolean> {
  await deps.db.updateTable('notify_deliveries').set({ message_ref: JSON.stringify(ref) }).where('id', '=', deliveryId).execute();
  return false;
}

/** Read by every notifier pass (built once: store/prepared.ts). */
const teamsBots = preparedQuery((db) => db.selectFrom('notify_channels').select('id').where('type', '=', 'teams').where('config', 'like', '%"botAppId"%'));
