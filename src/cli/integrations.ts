import { parseArgs } from 'node:util';
import type { ClientConfig } from '../config/config.js';
import { apiCommand, callApi, CliError, unknownSubcommand } from './client.js';
import { table } from './table.js';

export const INTEGRATIONS_USAGE = `usage: pitcrew integrations <list|create|alerts|test|delete> [options]

  list                                   the tenant's integrations: type, URL, last alert, last error
  create --name NAME --type TYPE [--config JSON] [--secret SECRET]
                                         connect a monitoring tool; prints the URL to give it, and a curl
                                         that posts one alert as the tool does. TYPE is
                                         alertmanager, grafana, monasca, zabbix, datadog, pagerduty,
                                         cloudwatch_sns or generic (docs/integrations.md)
  alerts ID [--limit N]                  the alerts it took, newest first, with what each did
  test ID [--host HOST] [--alarm NAME] [--act]
                                         send a test alert through it: matched against its rules,
                                         a dry run unless --act
  delete ID                              its URL stops taking alerts, its rules stop firing

The URL shows <api_key>: put a key with the webhook scope there (npx pitcrew api-keys create).
options: --server URL (PITCREW_SERVER), --token TOKEN (PITCREW_TOKEN), --json`;

interface IntegrationView {
  id: string;
  name: string;
  type: string;
  url: string;
  curl?: string;
  status: { lastAlertAt: string | null; lastError: string | null };
}

/** `pitcrew integrations …`: the integrations routes, for scripts and a first setup. */
export async function runIntegrations(args: string[], env: ClientConfig, out: (line: string) => void): Promise<number> {
  const [verb, ...rest] = args;
  const options = {
    server: { type: 'string' }, token: { type: 'string' }, json: { type: 'boolean' },
    name: { type: 'string' }, type: { type: 'string' }, config: { type: 'string' }, secret: { type: 'string' },
    limit: { type: 'string' }, host: { type: 'string' }, alarm: { type: 'string' }, act: { type: 'boolean' },
  } as const;
  const { values, positionals } = parseArgs({ args: rest, options, strict: true, allowPositionals: true });
  const { client, show } = apiCommand(values, env, out);
  switch (verb) {
    case 'list': {
      const page = (await callApi(client, 'GET', '/api/v1/integrations?limit=1000')) as { items: IntegrationView[] };
      show(page, table(['ID', 'NAME', 'TYPE', 'LAST ALERT', 'LAST ERROR', 'URL'], page.items.map(describe)));
      return 0;
    }
    case 'create': {
      if (!values.name || !values.type) throw new CliError(`create needs --name NAME and --type TYPE\n\n${INTEGRATIONS_USAGE}`, 2);
      const body = { name: values.name, type: values.type, ...(values.config ? { config: parseConfig(values.config) } : {}), ...(values.secret ? { secret: values.secret } : {}) };
      const made = (await callApi(client, 'POST', '/api/v1/integrations', body)) as IntegrationView;
      show(made, `created ${made.type} integration "${made.name}" (${made.id})\ngive the tool this URL, with an API key in place of <api_key>:\n${made.url}\n${tryIt(made)}`);
      return 0;
    }
    case 'alerts': {
      const id = onlyId(positionals, 'alerts');
      const limit = values.limit ?? '20';
      if (!/^[1-9]\d{0,3}$/.test(limit)) throw new CliError('--limit must be a whole number from 1 to 1000', 2);
      const page = (await callApi(client, 'GET', `/api/v1/integrations/${id}/alerts?limit=${limit}`)) as { items: AlertView[] };
      show(page, table(['RECEIVED', 'STATE', 'ALERT', 'HOST', 'WHAT IT DID'], page.items.map(describeAlert)));
      return 0;
    }
    case 'test': {
      const id = onlyId(positionals, 'test');
      const body = { ...(values.host ? { hostName: values.host } : {}), ...(values.alarm ? { alarmName: values.alarm } : {}), act: values.act === true };
      const sent = (await callApi(client, 'POST', `/api/v1/integrations/${id}/test`, body)) as { alert: { alarmName: string; events: TestedEvent[] } };
      const did = sent.alert.events.length === 0 ? 'no rule matched it' : sent.alert.events.map(describeTested).join('\n');
      show(sent, `sent test alert "${sent.alert.alarmName}"${values.act ? '' : ' (a dry run)'}\n${did}`);
      return 0;
    }
    case 'delete': {
      await callApi(client, 'DELETE', `/api/v1/integrations/${onlyId(positionals, 'delete')}`);
      show({ deleted: positionals[0] }, `deleted integration ${positionals[0]}: its URL answers 404 from now on`);
      return 0;
    }
    default:
      throw unknownSubcommand(verb, INTEGRATIONS_USAGE);
  }
}

interface AlertView {
  receivedAt: string;
  state: string;
  alarmName: string | null;
  hostName: string | null;
  events: Array<{ ruleId: string; outcome: string }>;
}

function onlyId(positionals: string[], verb: string): string {
  if (positionals.length !== 1) throw new CliError(`${verb} needs the integration id\n\n${INTEGRATIONS_USAGE}`, 2);
  return encodeURIComponent(positionals[0]!);
}

type TestedEvent = AlertView['events'][number] & { ifActed?: { outcome: string; reason: string | null } };

/** A rule a test alert raised; a dry run also says what acting would have done (no_target: the reason). */
function describeTested(e: TestedEvent): string {
  const acted = e.ifActed ? `; had it acted: ${e.ifActed.outcome}${e.ifActed.outcome === 'accepted' || !e.ifActed.reason ? '' : ` (${e.ifActed.reason})`}` : '';
  return `rule ${e.ruleId}: ${e.outcome}${acted}`;
}

function describeAlert(alert: AlertView): string[] {
  const did = alert.events.length === 0 ? 'no rule matched' : alert.events.map((e) => `${e.outcome} (rule ${e.ruleId})`).join(', ');
  return [alert.receivedAt, alert.state, alert.alarmName ?? '-', alert.hostName ?? '-', did];
}

/** How to see it work before the tool is set up: the tool's own body by curl, when anyone can make one, and a test alert. */
function tryIt(made: IntegrationView): string {
  const test = `npx pitcrew integrations test ${made.id}`;
  if (!made.curl) return `only the tool can sign what it sends; see it work with a test alert (a dry run): ${test}`;
  const exports = made.curl.includes('PITCREW_INTEGRATION_SECRET') ? 'PITCREW_API_KEY and PITCREW_INTEGRATION_SECRET' : 'PITCREW_API_KEY';
  return [
    `try it with one alert about web-1 as the tool sends it (export ${exports} first; its rules act on it as on the tool's own):`,
    made.curl,
    `or send a test alert (a dry run): ${test}`,
  ].join('\n');
}

function parseConfig(text: string): unknown {
  try {
    return JSON.parse(text);
  } catch {
    throw new CliError('--config must be a JSON object, e.g. --config \'{"hostLabel":"nodename"}\'', 2);
  }
}

function describe(integration: IntegrationView): string[] {
  const { lastAlertAt, lastError } = integration.status;
  return [integration.id, integration.name, integration.type, lastAlertAt ?? 'never', lastError ?? '-', integration.url];
}
