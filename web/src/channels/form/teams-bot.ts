import type { ChannelConfigView } from '../../api/channel-types';

/**
 * A Teams channel's Azure Bot (docs/notifications.md, "Approve from Teams"): all of it or none.
 * The password starts blank: on an existing channel, blank keeps the stored one.
 */
export interface TeamsBotForm {
  botAppId: string;
  botAppPassword: string;
  botTenantId: string;
  serviceUrl: string;
  conversationId: string;
}

export const TEAMS_BOT_FIELDS = ['botAppId', 'botAppPassword', 'botTenantId', 'serviceUrl', 'conversationId'] as const;

export const EMPTY_TEAMS_BOT: TeamsBotForm = { botAppId: '', botAppPassword: '', botTenantId: '', serviceUrl: '', conversationId: '' };

export function teamsBotForm(config: ChannelConfigView): TeamsBotForm {
  return { ...EMPTY_TEAMS_BOT, botAppId: config.botAppId ?? '', botTenantId: config.botTenantId ?? '', serviceUrl: config.serviceUrl ?? '', conversationId: config.conversationId ?? '' };
}

const hasBot = (form: TeamsBotForm) => form.botAppId.trim() !== '';

/** The bot's settings for a new channel; none without an app id. */
export function teamsBotInput(form: TeamsBotForm): Record<string, string> {
  if (!hasBot(form)) return {};
  return {
    botAppId: form.botAppId.trim(), botAppPassword: form.botAppPassword, serviceUrl: form.serviceUrl.trim(), conversationId: form.conversationId.trim(),
    ...(form.botTenantId.trim() ? { botTenantId: form.botTenantId.trim() } : {}),
  };
}

/** The bot's settings for a change: an app id cleared removes the whole bot; a blank password keeps the stored one. */
export function teamsBotPatch(form: TeamsBotForm): Record<string, string | null> {
  if (!hasBot(form)) return { botAppId: null, botAppPassword: null, botTenantId: null, serviceUrl: null, conversationId: null };
  return {
    botAppId: form.botAppId.trim(), serviceUrl: form.serviceUrl.trim(), conversationId: form.conversationId.trim(), botTenantId: form.botTenantId.trim() || null,
    ...(form.botAppPassword ? { botAppPassword: form.botAppPassword } : {}),
  };
}

/** Quick checks of the bot's settings, given the app id; the service checks everything again. */
export function checkTeamsBot(form: TeamsBotForm, passwordStored: boolean, set: (field: keyof TeamsBotForm, message: string | undefined) => void): void {
  if (!hasBot(form)) return;
  if (!form.botAppPassword && !passwordStored) set('botAppPassword', 'the client secret of the bot’s app registration');
  set('serviceUrl', /^https?:\/\/\S+$/.test(form.serviceUrl.trim()) ? undefined : 'the Bot Connector’s service URL, e.g. https://smba.trafficmanager.net/emea/');
  set('conversationId', form.conversationId.trim() ? undefined : 'the Teams channel’s conversation id, 19:…@thread.tacv2');
}
