/**
 * Where Microsoft's Bot Framework lives (docs/notifications.md, "Approve from Teams"). Server
 * settings only (PITCREW_TEAMS_OPENID_METADATA_URL, PITCREW_TEAMS_LOGIN_URL), never a channel's:
 * whoever sets them decides which tokens pitcrew believes. Tests point them at an emulator.
 */
export interface TeamsBotEndpoints {
  /**
   * The OpenID metadata of the Bot Connector's tokens: its jwks_uri lists the keys they are signed
   * with. https://learn.microsoft.com/en-us/azure/bot-service/rest-api/bot-framework-rest-connector-authentication
   * ("Connector to bot", step 2).
   */
  openIdMetadataUrl: string;
  /**
   * Microsoft Entra's login service: the bot's token comes from `{loginUrl}/{tenant}/oauth2/v2.0/token`,
   * the tenant being botframework.com for a multi-tenant bot (same page, "Bot to connector").
   */
  loginUrl: string;
}

export const TEAMS_BOT_DEFAULTS: TeamsBotEndpoints = {
  openIdMetadataUrl: 'https://login.botframework.com/v1/.well-known/openidconfiguration',
  loginUrl: 'https://login.microsoftonline.com',
};

/** The issuer of every token the Bot Connector sends a bot (same page, "Connector to bot", step 4). */
export const BOT_CONNECTOR_ISSUER = 'https://api.botframework.com';
/** The scope of the bot's own token for calling the connector (same page, "Bot to connector", step 1). */
export const BOT_CONNECTOR_SCOPE = 'https://api.botframework.com/.default';
