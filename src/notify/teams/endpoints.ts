/** Where the Bot Framework lives: the operator's settings (config/config.ts TeamsBotEndpoints). */
export { TEAMS_BOT_DEFAULTS, type TeamsBotEndpoints } from '../../config/config.js';

/** The issuer of every token the Bot Connector sends a bot (bot-framework-rest-connector-authentication, "Connector to bot", step 4). */
export const BOT_CONNECTOR_ISSUER = 'https://api.botframework.com';
/** The scope of the bot's own token for calling the connector (same page, "Bot to connector", step 1). */
export const BOT_CONNECTOR_SCOPE = 'https://api.botframework.com/.default';
