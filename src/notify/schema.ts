import { Type, type Static, type TObject } from 'typebox';

/*
 * The channel contract (DESIGN.md §7): {name, type, mode, config}. Validation, OpenAPI and types
 * come from these schemas. Secret settings are write-only: views carry a mask, never the value.
 */

export const CHANNEL_TYPES = ['email', 'slack', 'teams', 'mattermost', 'google_chat', 'webhook'] as const;
export type ChannelType = (typeof CHANNEL_TYPES)[number];
export const CHAT_TYPES: readonly ChannelType[] = ['slack', 'teams', 'mattermost', 'google_chat'];

export const CHANNEL_MODES = ['all', 'errors', 'disabled'] as const;
export type ChannelMode = (typeof CHANNEL_MODES)[number];

/** The config fields of each type that are secret: sealed at rest, masked in every view. */
export const SECRET_FIELDS: Record<ChannelType, readonly string[]> = {
  email: ['password'],
  slack: ['webhookUrl', 'botToken', 'signingSecret'],
  teams: ['webhookUrl', 'botAppPassword'],
  mattermost: ['webhookUrl'],
  google_chat: ['webhookUrl'],
  webhook: ['secret'],
};

const Name = Type.String({ minLength: 1, maxLength: 200, pattern: '\\S' });
const Mode = Type.Enum([...CHANNEL_MODES], { description: 'all: every result and escalation; errors: failed, timed out, lost, expired, escalations; disabled: nothing' });
const Email = Type.String({ format: 'email', maxLength: 320 });
const HttpUrl = Type.String({ minLength: 8, maxLength: 2048, pattern: '^https?://[^\\s]+$' });
const RuleIds = Type.Union([Type.Array(Type.String({ format: 'uuid' }), { maxItems: 200, uniqueItems: true }), Type.Null()], {
  description: 'only results and escalations of these rules; null or absent: every rule',
});

const EmailConfig = Type.Object(
  {
    host: Type.String({ minLength: 1, maxLength: 253 }),
    port: Type.Integer({ minimum: 1, maximum: 65535 }),
    secure: Type.Boolean({ description: 'true: TLS from the first byte (port 465); false: plain connection upgraded with STARTTLS (port 587)' }),
    username: Type.Optional(Type.String({ minLength: 1, maxLength: 320 })),
    password: Type.Optional(Type.String({ minLength: 1, maxLength: 1024, description: 'write-only' })),
    from: Type.String({ minLength: 3, maxLength: 400, description: 'e.g. "pitcrew <pitcrew@example.com>"' }),
    to: Type.Array(Email, { minItems: 1, maxItems: 50, uniqueItems: true }),
    requireTls: Type.Optional(Type.Boolean({ description: 'default true: refuse to send unless STARTTLS succeeds; false only for a local relay without TLS' })),
    ca: Type.Optional(Type.String({ minLength: 1, maxLength: 64 * 1024, description: 'PEM certificate(s) to trust for this server, e.g. a private CA' })),
  },
  { additionalProperties: false },
);
const ChatConfig = Type.Object({ webhookUrl: HttpUrl }, { additionalProperties: false });
/*
 * Teams: the incoming webhook for every message, and optionally an Azure Bot (docs/notifications.md,
 * "Approve from Teams"): with its app id and password, approval requests are posted by the Bot
 * Connector as cards with Approve and Reject, to the conversation named here.
 */
const TeamsConfig = Type.Object(
  {
    webhookUrl: HttpUrl,
    botAppId: Type.Optional(Type.String({ minLength: 1, maxLength: 100, pattern: '^[A-Za-z0-9-]+$', description: "the Azure Bot's Microsoft App ID" })),
    botAppPassword: Type.Optional(Type.String({ minLength: 1, maxLength: 1024, description: "the bot's client secret, write-only" })),
    botTenantId: Type.Optional(Type.String({ minLength: 1, maxLength: 100, pattern: '^[A-Za-z0-9.-]+$', description: 'the Microsoft Entra tenant of a single-tenant bot; absent for a multi-tenant one' })),
    serviceUrl: Type.Optional(Type.String({ ...HttpUrl, description: "the Bot Connector's service URL of the team (from an activity Teams sent the bot), e.g. https://smba.trafficmanager.net/emea/" })),
    conversationId: Type.Optional(Type.String({ minLength: 1, maxLength: 500, description: 'the Teams channel (conversation) approval requests are posted to, e.g. 19:…@thread.tacv2' })),
  },
  {
    additionalProperties: false,
    // All the bot settings or none: a bot without its password or conversation could post nothing.
    dependencies: {
      botAppId: ['botAppPassword', 'serviceUrl', 'conversationId'], botAppPassword: ['botAppId'], serviceUrl: ['botAppId'], conversationId: ['botAppId'], botTenantId: ['botAppId'],
    },
  },
);
/**
 * Slack's incoming webhook, a Slack app's settings (docs/notifications.md, "Slack app"), or both:
 * with the app, approval requests carry Approve and Reject buttons and are updated with their
 * outcome, and without a webhook every other message goes through the app too. The app's three
 * settings go together (a button needs the signing secret to be verified, an update the token and
 * channel); a channel needs the webhook or the app (channels.ts, placesToPost).
 */
const SlackConfig = Type.Object(
  {
    webhookUrl: Type.Optional(HttpUrl),
    botToken: Type.Optional(Type.String({ pattern: '^xoxb-[A-Za-z0-9-]+$', maxLength: 512, description: "the app's Bot User OAuth Token (xoxb-…), write-only; scopes chat:write, users:read, users:read.email" })),
    signingSecret: Type.Optional(Type.String({ pattern: '^[0-9a-f]{16,128}$', description: "the app's Signing Secret (Basic Information), write-only: verifies its button clicks" })),
    channelId: Type.Optional(Type.String({ pattern: '^[CG][A-Z0-9]{2,30}$', description: 'the Slack channel approval requests are posted to (its C… id), the app invited to it' })),
  },
  {
    additionalProperties: false,
    dependencies: { botToken: ['signingSecret', 'channelId'], signingSecret: ['botToken', 'channelId'], channelId: ['botToken', 'signingSecret'] },
  },
);

/** What a complete config must hold once merged (secrets may come from what is stored). */
export const COMPLETE_CONFIG: Record<ChannelType, TObject> = {
  email: EmailConfig,
  slack: SlackConfig,
  teams: TeamsConfig,
  mattermost: ChatConfig,
  google_chat: ChatConfig,
  webhook: Type.Object(
    { url: HttpUrl, secret: Type.String({ minLength: 16, maxLength: 1024, description: 'HMAC-SHA256 key, write-only' }) },
    { additionalProperties: false },
  ),
};

function variant<T extends ChannelType>(type: T, config: TObject) {
  return Type.Object(
    { name: Name, type: Type.Literal(type), mode: Type.Optional(Mode), config, ruleIds: Type.Optional(RuleIds) },
    { additionalProperties: false },
  );
}

/** A union told apart by `type` (Ajv's discriminator), so errors name the fields of that type. */
export const ChannelInput = Type.Unsafe<ChannelInputShape>({
  type: 'object',
  required: ['type'],
  discriminator: { propertyName: 'type' },
  oneOf: CHANNEL_TYPES.map((type) => variant(type, COMPLETE_CONFIG[type])),
});

export interface ChannelInputShape {
  name: string;
  type: ChannelType;
  mode?: ChannelMode;
  config: Record<string, unknown>;
  ruleIds?: string[] | null;
}

export const ChannelPatch = Type.Object(
  {
    name: Type.Optional(Name),
    mode: Type.Optional(Mode),
    config: Type.Optional(Type.Record(Type.String(), Type.Unknown(), { description: 'fields given replace the stored ones, null removes an optional one; a secret left out is kept' })),
    ruleIds: Type.Optional(RuleIds),
  },
  { additionalProperties: false, minProperties: 1 },
);
export type ChannelPatch = Static<typeof ChannelPatch>;

const Time = Type.Union([Type.String({ format: 'date-time' }), Type.Null()]);

export const ChannelView = Type.Object({
  id: Type.String({ format: 'uuid' }),
  name: Type.String(),
  type: Type.Enum([...CHANNEL_TYPES]),
  mode: Type.Enum([...CHANNEL_MODES]),
  config: Type.Record(Type.String(), Type.Unknown(), { description: 'secrets shown as a mask ("…(set)") or a *Set flag' }),
  ruleIds: Type.Union([Type.Array(Type.String()), Type.Null()]),
  status: Type.Enum(['ok', 'failing', 'never_used', 'disabled'], { description: 'failing: the last attempt failed' }),
  lastDeliveredAt: Time,
  lastError: Type.Union([Type.String(), Type.Null()]),
  lastErrorAt: Time,
  createdAt: Type.String({ format: 'date-time' }),
  updatedAt: Type.String({ format: 'date-time' }),
});
export type ChannelView = Static<typeof ChannelView>;

export const AttemptView = Type.Object({
  id: Type.String(),
  deliveryId: Type.Union([Type.String(), Type.Null()], { description: 'null for a test message' }),
  kind: Type.String({ description: 'run, escalation, not_run, approval, runbook or test' }),
  title: Type.String(),
  attempt: Type.Integer({ description: '1 for the first try of a delivery' }),
  ok: Type.Boolean(),
  status: Type.Union([Type.String(), Type.Null()], { description: 'e.g. "HTTP 500", "SMTP 535"' }),
  error: Type.Union([Type.String(), Type.Null()]),
  durationMs: Type.Integer(),
  at: Type.String({ format: 'date-time' }),
});

export const TestResultView = Type.Object({
  ok: Type.Literal(true),
  status: Type.Union([Type.String(), Type.Null()]),
  durationMs: Type.Integer(),
});

export const ContactsInput = Type.Object(
  {
    emails: Type.Array(Email, { maxItems: 50, uniqueItems: true, description: 'on-call addresses' }),
    channelIds: Type.Array(Type.String({ format: 'uuid' }), { maxItems: 50, uniqueItems: true, description: 'channels that hear every escalation, whatever their mode (unless disabled) and rule filter' }),
    emailChannelId: Type.Optional(Type.Union([Type.String({ format: 'uuid' }), Type.Null()], {
      description: "the email channel whose SMTP server sends to `emails`; default the tenant's first email channel",
    })),
  },
  { additionalProperties: false },
);
export type ContactsInput = Static<typeof ContactsInput>;

export const ContactsView = Type.Object({
  emails: Type.Array(Type.String()),
  channelIds: Type.Array(Type.String()),
  emailChannelId: Type.Union([Type.String(), Type.Null()]),
  updatedAt: Time,
});
export type ContactsView = Static<typeof ContactsView>;
