import type { Channel, ChannelInput, ChannelMode, ChannelPatch, ChannelType } from '../../api/channel-types';
import type { FieldError } from '../../api/problem';
import { badAddress, splitAddresses } from '../addresses';
import { checkTeamsBot, EMPTY_TEAMS_BOT, TEAMS_BOT_FIELDS, teamsBotForm, teamsBotInput, teamsBotPatch, type TeamsBotForm } from './teams-bot';

/**
 * What the channel form edits, for every type at once (switching type keeps what was typed).
 * Secret fields start blank: on an existing channel, blank keeps the stored secret.
 */
export interface ChannelForm extends TeamsBotForm {
  name: string;
  type: ChannelType;
  mode: ChannelMode;
  everyRule: boolean;
  ruleIds: string[];
  webhookUrl: string;
  url: string;
  secret: string;
  host: string;
  port: string;
  /** true: TLS from the first byte; false: STARTTLS. */
  secure: boolean;
  requireTls: boolean;
  username: string;
  password: string;
  from: string;
  /** One address a line. */
  to: string;
  ca: string;
  /** Slack's app, for approval buttons: all three or none. */
  botToken: string;
  signingSecret: string;
  channelId: string;
  /** The channel id stored when the form opened: clearing it removes the app. */
  storedChannelId: string;
}

export type ChannelField = keyof ChannelForm;
export type ChannelErrors = Partial<Record<ChannelField, string>>;

export function emptyChannelForm(): ChannelForm {
  return {
    name: '', type: 'slack', mode: 'all', everyRule: true, ruleIds: [],
    webhookUrl: '', url: '', secret: '',
    host: '', port: '587', secure: false, requireTls: true, username: '', password: '', from: '', to: '', ca: '',
    ...EMPTY_TEAMS_BOT,
    botToken: '', signingSecret: '', channelId: '', storedChannelId: '',
  };
}

export function formFromChannel(channel: Channel): ChannelForm {
  const { config } = channel;
  return {
    ...emptyChannelForm(),
    name: channel.name,
    type: channel.type,
    mode: channel.mode,
    everyRule: channel.ruleIds === null,
    ruleIds: channel.ruleIds ?? [],
    url: config.url ?? '',
    host: config.host ?? '',
    port: config.port === undefined ? '587' : String(config.port),
    secure: config.secure ?? false,
    requireTls: config.requireTls ?? true,
    username: config.username ?? '',
    from: config.from ?? '',
    to: (config.to ?? []).join('\n'),
    ca: config.ca ?? '',
    ...teamsBotForm(config),
    channelId: config.channelId ?? '',
    storedChannelId: config.channelId ?? '',
  };
}

const trimmed = (text: string) => text.trim();

function emailConfig(form: ChannelForm) {
  return { host: trimmed(form.host), port: Number(form.port.trim()), secure: form.secure, requireTls: form.requireTls, from: trimmed(form.from), to: splitAddresses(form.to) };
}

export function toChannelInput(form: ChannelForm): ChannelInput {
  const common = { name: trimmed(form.name), type: form.type, mode: form.mode, ruleIds: form.everyRule ? null : form.ruleIds };
  switch (form.type) {
    case 'email':
      return {
        ...common,
        config: {
          ...emailConfig(form),
          ...(form.username.trim() ? { username: trimmed(form.username) } : {}),
          ...(form.password ? { password: form.password } : {}),
          ...(form.ca.trim() ? { ca: form.ca.trim() } : {}),
        },
      };
    case 'webhook':
      return { ...common, config: { url: trimmed(form.url), secret: form.secret } };
    case 'teams':
      return { ...common, config: { webhookUrl: trimmed(form.webhookUrl), ...teamsBotInput(form) } };
    case 'slack':
      // With an app, the incoming webhook may be left out: the app posts everything.
      return { ...common, config: { ...(form.webhookUrl.trim() ? { webhookUrl: trimmed(form.webhookUrl) } : {}), ...slackApp(form) } };
    default:
      return { ...common, config: { webhookUrl: trimmed(form.webhookUrl) } };
  }
}

/** The Slack app's settings typed, when a channel id is: the secrets only when typed (blank keeps the stored ones). */
function slackApp(form: ChannelForm): Record<string, string> {
  if (!form.channelId.trim()) return {};
  return { channelId: trimmed(form.channelId), ...(form.botToken ? { botToken: trimmed(form.botToken) } : {}), ...(form.signingSecret ? { signingSecret: trimmed(form.signingSecret) } : {}) };
}

/** A change of an existing channel: a secret left blank is left out, so the stored one stays. */
export function toChannelPatch(form: ChannelForm): ChannelPatch {
  const common = { name: trimmed(form.name), mode: form.mode, ruleIds: form.everyRule ? null : form.ruleIds };
  switch (form.type) {
    case 'email': {
      const username = form.username.trim();
      // No username means no SMTP AUTH: the stored password goes with it.
      const password = !username ? { password: null } : form.password ? { password: form.password } : {};
      return { ...common, config: { ...emailConfig(form), username: username || null, ...password, ca: form.ca.trim() || null } };
    }
    case 'webhook':
      return { ...common, config: { url: trimmed(form.url), ...(form.secret ? { secret: form.secret } : {}) } };
    case 'teams':
      return { ...common, config: { ...(form.webhookUrl.trim() ? { webhookUrl: trimmed(form.webhookUrl) } : {}), ...teamsBotPatch(form) } };
    case 'slack': {
      // No channel id means no Slack app: its token and signing secret go with it.
      const app = form.channelId.trim() ? slackApp(form) : form.storedChannelId ? { channelId: null, botToken: null, signingSecret: null } : {};
      return { ...common, config: { ...(form.webhookUrl.trim() ? { webhookUrl: trimmed(form.webhookUrl) } : {}), ...app } };
    }
    default:
      return { ...common, config: form.webhookUrl.trim() ? { webhookUrl: trimmed(form.webhookUrl) } : {} };
  }
}

const CONFIG_FIELDS: readonly ChannelField[] = ['webhookUrl', 'url', 'secret', 'host', 'port', 'secure', 'requireTls', 'username', 'password', 'from', 'to', 'ca', 'botToken', 'signingSecret', 'channelId', ...TEAMS_BOT_FIELDS];

/** The service's field errors (JSON pointers into the body) at the form's fields; the rest for a banner. */
export function channelErrorsFrom(fieldErrors: FieldError[]): { errors: ChannelErrors; unplaced: FieldError[] } {
  const errors: ChannelErrors = {};
  const unplaced: FieldError[] = [];
  for (const error of fieldErrors) {
    const [, body, first, second] = error.path.split('/');
    const field = body !== 'body' ? undefined : first === 'config' ? CONFIG_FIELDS.find((f) => f === second) : first === 'ruleIds' ? 'ruleIds' : (['name', 'mode', 'type'] as const).find((f) => f === first);
    if (field) errors[field] ??= error.message;
    else unplaced.push(error);
  }
  return { errors, unplaced };
}

const HTTP_URL = /^https?:\/\/\S+$/;

/** What the stored channel already holds, so a blank secret can be kept. */
export interface StoredSecrets {
  /** The service's mask of the stored URL ("https://hooks.slack.com/…(set)"). */
  webhookUrl: string | null;
  secret: boolean;
  password: boolean;
  /** Teams: the bot's password is stored. */
  botAppPassword: boolean;
  botToken: boolean;
  signingSecret: boolean;
}

export const NO_SECRETS: StoredSecrets = { webhookUrl: null, secret: false, password: false, botAppPassword: false, botToken: false, signingSecret: false };

export function storedSecrets(channel: Channel): StoredSecrets {
  const { config } = channel;
  return {
    webhookUrl: config.webhookUrl ?? null, secret: config.secretSet === true, password: config.passwordSet === true,
    botAppPassword: config.botAppPasswordSet === true, botToken: config.botTokenSet === true, signingSecret: config.signingSecretSet === true,
  };
}

/** Quick checks before sending; the service checks everything again. */
export function checkChannelForm(form: ChannelForm, stored: StoredSecrets): ChannelErrors {
  const errors: ChannelErrors = {};
  const set = (field: ChannelField, message: string | undefined) => {
    if (message) errors[field] = message;
  };
  set('name', form.name.trim() ? undefined : 'name the channel after where it posts: “#ops on Slack”, “on-call mail”');
  if (!form.everyRule && form.ruleIds.length === 0) set('ruleIds', 'pick at least one rule, or let the channel hear every rule');
  switch (form.type) {
    case 'email': {
      set('host', form.host.trim() ? undefined : 'the SMTP server’s name, e.g. smtp.example.com');
      const port = Number(form.port.trim());
      set('port', Number.isInteger(port) && port >= 1 && port <= 65535 ? undefined : 'a port from 1 to 65535: 587 for STARTTLS, 465 for TLS');
      set('from', form.from.trim() ? undefined : 'the sender, e.g. pitcrew <pitcrew@example.com>');
      const to = splitAddresses(form.to);
      const bad = badAddress(to);
      set('to', to.length === 0 ? 'at least one address to send to' : bad ? `“${bad}” is not an email address` : undefined);
      if (form.username.trim() && !form.password && !stored.password) set('password', 'the password of this user; or leave the username blank for no SMTP AUTH');
      break;
    }
    case 'webhook':
      set('url', HTTP_URL.test(form.url.trim()) ? undefined : 'your receiver’s URL, starting with https:// (or http://)');
      if (form.secret || !stored.secret) set('secret', form.secret.length >= 16 ? undefined : 'at least 16 characters: your receiver checks signatures with it');
      break;
    default:
      if (form.webhookUrl.trim() || !(stored.webhookUrl || slackAppGiven(form))) set('webhookUrl', HTTP_URL.test(form.webhookUrl.trim()) ? undefined : webhookUrlHint(form));
      if (form.type === 'teams') checkTeamsBot(form, stored.botAppPassword, set);
  }
  if (form.type === 'slack') checkSlackApp(form, stored, set);
  return errors;
}

/** A Slack channel with its app's channel id typed posts through the app: the incoming webhook is optional there. */
function slackAppGiven(form: ChannelForm): boolean {
  return form.type === 'slack' && form.channelId.trim() !== '';
}

function webhookUrlHint(form: ChannelForm): string {
  return form.type === 'slack' ? 'paste the webhook URL, starting with https://, or fill in the Slack app below to post through it' : 'paste the webhook URL, starting with https://';
}

/** The Slack app's three settings go together: with a channel id, a token and a signing secret, typed or stored. */
function checkSlackApp(form: ChannelForm, stored: StoredSecrets, set: (field: ChannelField, message: string | undefined) => void): void {
  const anyTyped = form.channelId.trim() || form.botToken || form.signingSecret;
  if (!anyTyped) return;
  set('channelId', /^[CG][A-Z0-9]{2,30}$/.test(form.channelId.trim()) ? undefined : 'the channel’s id (C…), from its details in Slack; the app must be invited to it');
  if (form.botToken || !stored.botToken) set('botToken', /^xoxb-[A-Za-z0-9-]+$/.test(form.botToken.trim()) ? undefined : 'the app’s Bot User OAuth Token, starting with xoxb-');
  if (form.signingSecret || !stored.signingSecret) set('signingSecret', /^[0-9a-f]{16,128}$/.test(form.signingSecret.trim()) ? undefined : 'the app’s Signing Secret (Basic Information → App Credentials)');
}
