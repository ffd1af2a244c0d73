import type { ClientConfig } from '../config/config.js';
import { API_KEYS_USAGE, runApiKeys } from './api-keys.js';
import { CHANNELS_USAGE, runChannels } from './channels.js';
import { CONTACTS_USAGE, runContacts } from './contacts.js';
import { CREDENTIALS_USAGE, runCredentials } from './credentials.js';
import { EXECUTIONS_USAGE, runExecutions } from './executions.js';
import { INTEGRATIONS_USAGE, runIntegrations } from './integrations.js';
import { runTokens, runUsers, TOKENS_USAGE, USERS_USAGE } from './people.js';
import { REPOSITORIES_USAGE, runRepositories } from './repositories.js';
import { RULES_USAGE, runRules } from './rules.js';
import { RUNBOOKS_USAGE, runRunbooks } from './runbooks.js';
import { runSchedules, SCHEDULES_USAGE } from './schedules.js';

export type ApiCommand = (args: string[], client: ClientConfig, out: (line: string) => void) => Promise<number>;

/** The commands that work through the management API, each with its usage. */
export const API_COMMANDS: Record<string, { usage: string; run: ApiCommand }> = {
  'api-keys': { usage: API_KEYS_USAGE, run: runApiKeys },
  integrations: { usage: INTEGRATIONS_USAGE, run: runIntegrations },
  channels: { usage: CHANNELS_USAGE, run: runChannels },
  credentials: { usage: CREDENTIALS_USAGE, run: runCredentials },
  schedules: { usage: SCHEDULES_USAGE, run: runSchedules },
  rules: { usage: RULES_USAGE, run: runRules },
  runbooks: { usage: RUNBOOKS_USAGE, run: runRunbooks },
  repositories: { usage: REPOSITORIES_USAGE, run: runRepositories },
  executions: { usage: EXECUTIONS_USAGE, run: runExecutions },
  'escalation-contacts': { usage: CONTACTS_USAGE, run: runContacts },
  users: { usage: USERS_USAGE, run: runUsers },
  tokens: { usage: TOKENS_USAGE, run: runTokens },
};
