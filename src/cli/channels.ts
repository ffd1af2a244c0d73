import { parseArgs } from 'node:util';
import type { ClientConfig } from '../config/config.js';
import { apiCommand, callApi, CliError, readJsonOption, unknownSubcommand } from './client.js';
import { table } from './table.js';

export const CHANNELS_USAGE = `usage: pitcrew channels <list|create|test|delete> [options]

  list                                       the tenant's channels, with last delivery and last error
  create --name NAME --type TYPE [--mode all|errors|disabled] [--rule RULE_ID]... --config JSON|@FILE|-
                                             TYPE: email, slack, teams, mattermost, google_chat, webhook
                                             (--config - reads stdin: keeps secrets out of the process list)
  test ID                                    send a test message now and say how it went
  delete ID                                  delete a channel

options: --server URL (PITCREW_SERVER, default http://localhost:8080), --token TOKEN (PITCREW_TOKEN), --json`;

const COMMON = { server: { type: 'string' }, token: { type: 'string' }, json: { type: 'boolean' } } as const;

interface Channel {
  id: string;
  name: string;
  type: string;
  mode: string;
  status: string;
  lastDeliveredAt: string | null;
  lastError: string | null;
}

/** `pitcrew channels …`: the channels API from a terminal, in the words of docs/notifications.md. */
export async function runChannels(args: string[], env: ClientConfig, out: (line: string) => void): Promise<number> {
  const [verb, ...rest] = args;
  const options = { ...COMMON, name: { type: 'string' }, type: { type: 'string' }, mode: { type: 'string' }, config: { type: 'string' }, rule: { type: 'string', multiple: true } } as const;
  const { values, positionals } = parseArgs({ args: rest, options, allowPositionals: true, strict: true });
  const { client } = apiCommand(values, env, out);
  const print = (value: unknown, human: () => string) => out(values.json ? JSON.stringify(value, null, 2) : human());
  const id = () => {
    if (!positionals[0]) throw new CliError(`pitcrew channels ${verb} needs the channel id (npx pitcrew channels list shows them)`, 2);
    return encodeURIComponent(positionals[0]);
  };
  switch (verb) {
    case 'list': {
      const page = (await callApi(client, 'GET', '/api/v1/channels?limit=1000')) as { items: Channel[] };
      print(page, () => table(['ID', 'NAME', 'TYPE', 'MODE', 'STATUS', 'LAST DELIVERED', 'LAST ERROR'], page.items.map(describe), 'no channels yet: npx pitcrew channels create --help'));
      return 0;
    }
    case 'create': {
      if (!values.name || !values.type || !values.config) throw new CliError('pitcrew channels create needs --name, --type and --config', 2);
      const body = { name: values.name, type: values.type, ...(values.mode ? { mode: values.mode } : {}), ...(values.rule ? { ruleIds: values.rule } : {}), config: readJsonOption('--config', values.config) };
      const created = (await callApi(client, 'POST', '/api/v1/channels', body)) as Channel;
      print(created, () => `created ${created.type} channel "${created.name}" (${created.id}), mode ${created.mode}; try it: npx pitcrew channels test ${created.id}`);
      return 0;
    }
    case 'test': {
      const result = (await callApi(client, 'POST', `/api/v1/channels/${id()}/test`)) as { status: string | null; durationMs: number };
      print(result, () => `delivered (${result.status ?? 'accepted'}) in ${result.durationMs} ms`);
      return 0;
    }
    case 'delete':
      await callApi(client, 'DELETE', `/api/v1/channels/${id()}`);
      print({ deleted: positionals[0] }, () => `deleted ${positionals[0]}`);
      return 0;
    default:
      throw unknownSubcommand(verb, CHANNELS_USAGE);
  }
}

function describe(c: Channel): string[] {
  return [c.id, c.name, c.type, c.mode, c.status, c.lastDeliveredAt ?? '-', c.lastError ? c.lastError.slice(0, 60) : '-'];
}
