import { parseArgs } from 'node:util';
import type { ClientConfig } from '../config/config.js';
import { CliError, callApi } from './client.js';

export const INTEGRATIONS_USAGE = `usage: pitcrew integrations <list|create|delete> [options]

  list                                   the tenant's integrations: type, URL, last alert, last error
  create --name NAME --type TYPE [--config JSON] [--secret SECRET]
                                         connect a monitoring tool; prints the URL to give it. TYPE is
                                         alertmanager, grafana, monasca, zabbix, datadog, pagerduty,
                                         cloudwatch_sns or generic (docs/integrations.md)
  delete ID                              its URL stops taking alerts, its rules stop firing

The URL shows <api_key>: put a key with the webhook scope there (npx pitcrew api-keys create).
options: --server URL (PITCREW_SERVER), --token TOKEN (PITCREW_TOKEN), --json`;

interface IntegrationView {
  id: string;
  name: string;
  type: string;
  url: string;
  status: { lastAlertAt: string | null; lastError: string | null };
}

/** `pitcrew integrations …`: the integrations routes, for scripts and a first setup. */
export async function runIntegrations(args: string[], env: ClientConfig, out: (line: string) => void): Promise<number> {
  const [verb, ...rest] = args;
  const options = {
    server: { type: 'string' }, token: { type: 'string' }, json: { type: 'boolean' },
    name: { type: 'string' }, type: { type: 'string' }, config: { type: 'string' }, secret: { type: 'string' },
  } as const;
  const { values, positionals } = parseArgs({ args: rest, options, strict: true, allowPositionals: true });
  const client: ClientConfig = { server: (values.server ?? env.server).replace(/\/$/, ''), token: values.token ?? env.token };
  const show = (value: unknown, text: string) => out(values.json ? JSON.stringify(value, null, 2) : text);
  switch (verb) {
    case 'list': {
      const page = (await callApi(client, 'GET', '/api/v1/integrations?limit=1000')) as { items: IntegrationView[] };
      show(page, ['ID  NAME  TYPE  LAST ALERT  LAST ERROR  URL', ...page.items.map(describe)].join('\n'));
      return 0;
    }
    case 'create': {
      if (!values.name || !values.type) throw new CliError(`create needs --name NAME and --type TYPE\n\n${INTEGRATIONS_USAGE}`, 2);
      const body = { name: values.name, type: values.type, ...(values.config ? { config: parseConfig(values.config) } : {}), ...(values.secret ? { secret: values.secret } : {}) };
      const made = (await callApi(client, 'POST', '/api/v1/integrations', body)) as IntegrationView;
      show(made, `created ${made.type} integration "${made.name}" (${made.id})\ngive the tool this URL, with an API key in place of <api_key>:\n${made.url}`);
      return 0;
    }
    case 'delete': {
      if (positionals.length !== 1) throw new CliError(`delete needs the integration id\n\n${INTEGRATIONS_USAGE}`, 2);
      await callApi(client, 'DELETE', `/api/v1/integrations/${encodeURIComponent(positionals[0]!)}`);
      show({ deleted: positionals[0] }, `deleted integration ${positionals[0]}: its URL answers 404 from now on`);
      return 0;
    }
    default:
      throw new CliError(`${verb === undefined ? 'a subcommand is needed' : `unknown subcommand "${verb}"`}\n\n${INTEGRATIONS_USAGE}`, 2);
  }
}

function parseConfig(text: string): unknown {
  try {
    return JSON.parse(text);
  } catch {
    throw new CliError('--config must be a JSON object, e.g. --config \'{"hostLabel":"nodename"}\'', 2);
  }
}

function describe(integration: IntegrationView): string {
  const { lastAlertAt, lastError } = integration.status;
  return [integration.id, integration.name, integration.type, lastAlertAt ?? 'never', lastError ?? '-', integration.url].join('  ');
}
