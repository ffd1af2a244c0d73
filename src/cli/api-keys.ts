import { parseArgs } from 'node:util';
import type { ClientConfig } from '../config/config.js';
import { apiCommand, callApi, CliError, unknownSubcommand } from './client.js';
import { table } from './table.js';

export const API_KEYS_USAGE = `usage: pitcrew api-keys <list|create|narrow> [options]

  list                                   the tenant's keys with their scopes (never the keys)
  create --name NAME [--scope S]...      issue a key, shown once; S is webhook (the default) or enrol:
                                         npx pitcrew api-keys create --name agents --scope enrol   (for agents)
  narrow ID --scope S [--scope S]        keep only these scopes (a scope is never added back)

options: --server URL (PITCREW_SERVER), --token TOKEN (PITCREW_TOKEN), --json`;

interface KeyView {
  id: string;
  name: string;
  scopes: string[];
  hint: string;
  revokedAt: string | null;
  apiKey?: string;
}

/** `pitcrew api-keys …`: the API keys routes, for scripts and for making an agent's enrol key. */
export async function runApiKeys(args: string[], env: ClientConfig, out: (line: string) => void): Promise<number> {
  const [verb, ...rest] = args;
  const options = { server: { type: 'string' }, token: { type: 'string' }, json: { type: 'boolean' }, name: { type: 'string' }, scope: { type: 'string', multiple: true } } as const;
  const { values, positionals } = parseArgs({ args: rest, options, strict: true, allowPositionals: true });
  const { client, show } = apiCommand(values, env, out);
  switch (verb) {
    case 'list': {
      const page = (await callApi(client, 'GET', '/api/v1/api-keys?limit=1000')) as { items: KeyView[] };
      show(page, table(['ID', 'NAME', 'SCOPES', 'KEY', 'STATUS'], page.items.map(describeKey)));
      return 0;
    }
    case 'create': {
      if (!values.name) throw new CliError(`create needs --name NAME\n\n${API_KEYS_USAGE}`, 2);
      const key = (await callApi(client, 'POST', '/api/v1/api-keys', { name: values.name, ...(values.scope ? { scopes: values.scope } : {}) })) as KeyView;
      show(key, `${key.apiKey}\nissued key "${key.name}" (${key.id}), scopes ${key.scopes.join(', ')}: shown once, store it now`);
      return 0;
    }
    case 'narrow': {
      if (positionals.length !== 1 || !values.scope) throw new CliError(`narrow needs the key id and at least one --scope\n\n${API_KEYS_USAGE}`, 2);
      const key = (await callApi(client, 'PATCH', `/api/v1/api-keys/${encodeURIComponent(positionals[0]!)}`, { scopes: values.scope })) as KeyView;
      show(key, `key "${key.name}" (${key.id}) now has scopes ${key.scopes.join(', ')}`);
      return 0;
    }
    default:
      throw unknownSubcommand(verb, API_KEYS_USAGE);
  }
}

function describeKey(key: KeyView): string[] {
  return [key.id, key.name, key.scopes.join(','), `…${key.hint}`, key.revokedAt ? 'revoked' : 'active'];
}
