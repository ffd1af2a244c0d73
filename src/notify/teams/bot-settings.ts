/** A Teams channel's Azure Bot (schema.ts TeamsConfig), with its password opened. */
export interface TeamsBot {
  appId: string;
  appPassword: string;
  tenantId: string | null;
  serviceUrl: string;
  conversationId: string;
}

/** The channel's bot, or null when it has none (approval requests then go by the incoming webhook, without buttons). */
export function teamsBotOf(channel: { type: string; config: Record<string, unknown> }): TeamsBot | null {
  const c = channel.config;
  if (channel.type !== 'teams' || typeof c.botAppId !== 'string' || typeof c.botAppPassword !== 'string') return null;
  if (typeof c.serviceUrl !== 'string' || typeof c.conversationId !== 'string') return null;
  return { appId: c.botAppId, appPassword: c.botAppPassword, tenantId: typeof c.botTenantId === 'string' ? c.botTenantId : null, serviceUrl: c.serviceUrl, conversationId: c.conversationId };
}

/** Where a card the bot posted landed (notify_deliveries.message_ref, migration 0036), and what it last showed. */
export interface TeamsCardRef {
  serviceUrl: string;
  conversationId: string;
  activityId: string;
  /** The executions' states the card shows, so a pass updates it only when one changed. */
  shown?: string;
  /** Every execution it asks about is decided or ended, and the card says so: nothing more to update. */
  settled?: boolean;
}
