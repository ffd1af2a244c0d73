/**
 * What an API key may be used for. A key sits in every monitoring tool's webhook URL, where
 * many people and systems can read it; enrolling an agent takes a host's name and its jobs. So
 * keys are single-purpose by default (issue 22): `webhook` fires triggers, `enrol` enrols agents.
 */
export const API_KEY_SCOPES = ['webhook', 'enrol'] as const;

export type ApiKeyScope = (typeof API_KEY_SCOPES)[number];

/** What POST /api/v1/api-keys gives a key when the caller names no scope. */
export const DEFAULT_SCOPES: readonly ApiKeyScope[] = ['webhook'];

/** Keys issued before scopes existed, and the bootstrap key of the quick start, have both. */
export const ALL_SCOPES: readonly ApiKeyScope[] = API_KEY_SCOPES;

/** The stored form: a JSON array in the order of API_KEY_SCOPES, without repeats. */
export function formatScopes(scopes: readonly ApiKeyScope[]): string {
  return JSON.stringify(normaliseScopes(scopes));
}

export function parseScopes(text: string): ApiKeyScope[] {
  const values = JSON.parse(text) as unknown[];
  return API_KEY_SCOPES.filter((scope) => values.includes(scope));
}

export function normaliseScopes(scopes: readonly ApiKeyScope[]): ApiKeyScope[] {
  return API_KEY_SCOPES.filter((scope) => scopes.includes(scope));
}

/** The scopes in `wanted` that `current` lacks: a narrowing adds none. */
export function widening(current: readonly ApiKeyScope[], wanted: readonly ApiKeyScope[]): ApiKeyScope[] {
  return normaliseScopes(wanted).filter((scope) => !current.includes(scope));
}

/**
 * How to get a key for `scope` when the one in hand does not work. A key is shown once and stored
 * as a hash (docs/tenants.md), so nothing can show it again, GET /api/v1/api-keys included: the
 * way out is a new key, put where the old one was.
 */
export function newKeyAdvice(scope: ApiKeyScope, whereItGoes: string): string {
  const where = scope === 'enrol' ? '"Make an agent key" on the hosts page, ' : '';
  return `a key is shown only once, when it is issued (or replaced by a revoke), and pitcrew keeps only its hash: use the key you stored then, or issue a key with the ${scope} scope (${where}"Issue key" on the API keys page, POST /api/v1/api-keys {"name":…,"scopes":["${scope}"]}, or npx pitcrew api-keys create --name NAME --scope ${scope}) and ${whereItGoes}`;
}

/** What a caller holding a key without `scope` is told: which scope, and how to get a key with it. */
export function missingScopeMessage(scope: ApiKeyScope, keyName: string): string {
  return scope === 'webhook'
    ? `API key "${keyName}" lacks the webhook scope: it may enrol agents but not fire triggers. Put a webhook key in the URL (POST /api/v1/api-keys {"name":…,"scopes":["webhook"]})`
    : `API key "${keyName}" lacks the enrol scope: it may fire webhooks but not enrol agents. Give the agent an enrol key (POST /api/v1/api-keys {"name":…,"scopes":["enrol"]}, or "Make an agent key" on the hosts page)`;
}
