import { Type, type Static } from 'typebox';
import type { FastifyRequest } from 'fastify';
import type { Kysely } from 'kysely';
import { PitcrewError } from '../../errors/catalogue.js';
import type { Verdict } from '../../executions/approval-decision.js';
import { approvalStandings } from '../../executions/approval-outcomes.js';
import type { SecretBox } from '../../identity/secret-box.js';
import { problems } from '../../http/schemas.js';
import type { Api } from '../../http/types.js';
import type { Database } from '../../store/schema.js';
import { approvalRequestOf } from '../approval-request.js';
import { openChannel } from '../channels.js';
import { chatMember, decideFromChat, type ChatDecisionDeps } from '../chat-decision.js';
import { APPROVE_VERB, REJECT_VERB, approvalCard, cardStates, noticeCard } from './approval-card.js';
import { teamsBotOf, type TeamsBot } from './bot-settings.js';
import type { BotConnector } from './connector.js';
import { BotTokenCheck, BotTokenRefused } from './inbound-token.js';

export const TEAMS_ACTIVITIES_PATH = '/chat/teams/activities';

export interface TeamsActivityDeps extends ChatDecisionDeps {
  box: SecretBox;
  connector: BotConnector;
  tokens: BotTokenCheck;
}

/*
 * The activity as the Bot Framework posts it (https://learn.microsoft.com/en-us/azure/bot-service/rest-api/bot-framework-rest-connector-api-reference,
 * "Activity object"); a card's Action.Execute arrives as type invoke, name adaptiveCard/action,
 * value {action: {type: "Action.Execute", verb, data}}. Other fields are kept and ignored.
 */
const Activity = Type.Object({
  type: Type.String({ maxLength: 100 }),
  name: Type.Optional(Type.String({ maxLength: 200 })),
  channelId: Type.String({ maxLength: 100 }),
  serviceUrl: Type.String({ maxLength: 2048 }),
  from: Type.Object({ id: Type.String({ maxLength: 500 }) }, { additionalProperties: true }),
  conversation: Type.Object({ id: Type.String({ maxLength: 500 }) }, { additionalProperties: true }),
  value: Type.Optional(Type.Unknown()),
}, { additionalProperties: true });
type Activity = Static<typeof Activity>;

/** The answer to an adaptiveCard/action invoke: the card that replaces the clicked one. https://learn.microsoft.com/en-us/javascript/api/botframework-schema/adaptivecardinvokeresponse */
const InvokeAnswer = Type.Object({
  statusCode: Type.Integer(),
  type: Type.String(),
  value: Type.Unknown({ description: 'the Adaptive Card to show' }),
}, { description: 'for an adaptiveCard/action invoke; other activities get {}' });
const CARD_TYPE = 'application/vnd.microsoft.card.adaptive';

/**
 * The messaging endpoint of a Teams channel's bot (docs/notifications.md, "Approve from Teams").
 * No pitcrew credential: the Bot Connector's signed token authenticates it, and the clicking
 * person is mapped to a pitcrew member by the e-mail the connector gives for them.
 */
export function registerTeamsActivityRoute(app: Api, deps: TeamsActivityDeps): void {
  app.post(TEAMS_ACTIVITIES_PATH, {
    schema: {
      tags: ['chat'],
      summary: "Microsoft Teams' activities for a channel's bot: Approve and Reject clicked on an approval card",
      description: "The Azure Bot's messaging endpoint. Authenticated by the Bot Connector's JWT (issuer https://api.botframework.com, audience the channel's botAppId); answers an adaptiveCard/action invoke with the updated card, other activities with {}.",
      security: [],
      body: Activity,
      response: { 200: Type.Union([InvokeAnswer, Type.Object({})]), ...problems(400, 401, 503) },
    },
  }, async (request) => {
    const activity = request.body;
    const channels = await authenticate(deps, request, activity);
    if (activity.type !== 'invoke' || activity.name !== 'adaptiveCard/action') {
      // Teams tells a bot where it was added: the serviceUrl and conversation id its channel settings need.
      request.log.info({ activityType: activity.type, serviceUrl: activity.serviceUrl, conversationId: activity.conversation.id }, 'a Teams activity for a channel bot (nothing to do)');
      return {};
    }
    return { statusCode: 200, type: CARD_TYPE, value: await answerClick(deps, request, activity, channels) };
  });
}

interface BotChannel {
  tenantId: string;
  bot: TeamsBot;
}

/** The channels whose bot the token is for, once the token verifies; a 401 otherwise. */
async function authenticate(deps: TeamsActivityDeps, request: FastifyRequest, activity: Activity): Promise<BotChannel[]> {
  const token = /^Bearer\s+(\S+)$/i.exec(request.headers.authorization ?? '')?.[1];
  try {
    if (!token) throw new BotTokenRefused('no bearer token: the Bot Connector signs every activity it sends');
    const appId = await BotTokenCheck.claimedAudience(token);
    const channels = (await botChannels(deps.db, deps.box)).filter((c) => c.bot.appId === appId);
    if (channels.length === 0) throw new BotTokenRefused(`no Teams channel here has the bot app id ${appId}: set botAppId on the channel`);
    await deps.tokens.verify(token, appId, activity);
    return channels;
  } catch (error) {
    if (!(error instanceof BotTokenRefused)) {
      throw new PitcrewError('PITCREW_ERR_TOOL_UNAVAILABLE', `the Bot Framework's signing keys could not be read (${(error as Error).message}); Teams sends the click again`);
    }
    request.log.warn({ reason: error.message }, 'a Teams activity was refused');
    throw new PitcrewError('PITCREW_ERR_UNAUTHENTICATED', `${error.message}; nothing was done`);
  }
}

async function botChannels(db: Kysely<Database>, box: SecretBox): Promise<BotChannel[]> {
  const rows = await db.selectFrom('notify_channels').selectAll().where('type', '=', 'teams').where('mode', '!=', 'disabled').execute();
  return rows.flatMap((row) => {
    // botAppId is not secret: a channel without it needs no opening.
    if (!(JSON.parse(row.config) as { botAppId?: unknown }).botAppId) return [];
    const bot = teamsBotOf(openChannel(box, row));
    return bot ? [{ tenantId: row.tenant_id, bot }] : [];
  });
}

/** Decides as the person who clicked, when they may; the card says what happened or why nothing did. */
async function answerClick(deps: TeamsActivityDeps, request: FastifyRequest, activity: Activity, channels: BotChannel[]): Promise<Record<string, unknown>> {
  const action = (activity.value as { action?: { verb?: unknown; data?: { executionId?: unknown } } } | undefined)?.action;
  const verdict: Verdict | null = action?.verb === APPROVE_VERB ? 'approve' : action?.verb === REJECT_VERB ? 'reject' : null;
  const executionId = typeof action?.data?.executionId === 'string' ? action.data.executionId : null;
  if (!verdict || !executionId) return noticeCard('This card action is not one pitcrew knows: nothing was done.');
  const execution = await deps.db.selectFrom('executions').select(['id', 'tenant_id', 'event_id']).where('id', '=', executionId).executeTakeFirst();
  const channel = execution && channels.find((c) => c.tenantId === execution.tenant_id);
  if (!execution || !channel) return noticeCard(`pitcrew has no execution ${executionId} for this bot: nothing was done.`);
  const note = await decideAs(deps, request, activity, channel, execution.id, verdict);
  const notification = await approvalRequestOf(deps.db, execution.event_id);
  if (!notification) return noticeCard(note.text);
  return approvalCard(notification, cardStates(await approvalStandings(deps.db, notification.executions.map((e) => e.id))), note);
}

async function decideAs(deps: TeamsActivityDeps, request: FastifyRequest, activity: Activity, channel: BotChannel, executionId: string, verdict: Verdict): Promise<{ text: string; attention: boolean }> {
  const member = await deps.connector.member(channel.bot, activity.serviceUrl, activity.conversation.id, activity.from.id).catch((error: unknown) => {
    request.log.warn({ err: error }, 'the Teams member who clicked could not be read');
    return undefined;
  });
  if (member === undefined) return refused('pitcrew could not ask Teams who you are (the Bot Connector did not answer): nothing was done; try again in a moment');
  if (member === null) return refused('Teams does not know you as a member of this conversation, so pitcrew cannot tell who you are: nothing was done');
  const email = member.email ?? member.userPrincipalName;
  if (!email) return refused('Teams gave no e-mail for you, so pitcrew cannot tell which member you are: nothing was done');
  const pitcrewMember = await chatMember(deps.db, channel.tenantId, email);
  if (!pitcrewMember) return refused(`${email} is not a member of this pitcrew tenant: nothing was done. Ask an admin to invite you, or decide on the execution's page`);
  const who = pitcrewMember.email ?? email;
  try {
    await decideFromChat(deps, pitcrewMember, { tenantId: channel.tenantId, executionId, verdict, via: 'teams', ip: request.ip });
    return { text: `${verdict === 'approve' ? 'Approved' : 'Rejected'} by ${who}.`, attention: verdict === 'reject' };
  } catch (error) {
    if (error instanceof PitcrewError) return refused(`${who}: ${error.message}`);
    throw error;
  }
}

function refused(text: string): { text: string; attention: boolean } {
  return { text, attention: true };
}
