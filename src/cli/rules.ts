import { parseArgs } from 'node:util';
import type { ClientConfig } from '../config/config.js';
import { apiCommand, callApi, CliError, readJsonOption, unknownSubcommand } from './client.js';
import { RULE_RUN_USAGE, runRuleNow } from './rule-run.js';
import { table } from './table.js';

export const RULES_USAGE = `usage: pitcrew rules <list|show|create|enable|disable|delete|run> [options]

  list [--search TEXT]                   the rules: trigger, what each does and where, on or off, last event
  show ID                                one rule, whole (JSON); a webhook rule's ready curl command
  create --file @FILE|-                  a rule from its JSON (POST /api/v1/rules: docs/rules.md), from a file or stdin
  enable ID, disable ID                  turn it on, or off (a rule that is off still records its alarms)
  delete ID                              delete it
${RULE_RUN_USAGE}

options: --server URL (PITCREW_SERVER), --token TOKEN (PITCREW_TOKEN), --json`;

interface RuleView {
  id: string;
  name: string;
  enabled: boolean;
  trigger: { type: string; schedule?: string; webhookUrl?: string; curl?: string };
  action: { type: string; operation?: string; provider?: string; flavour?: string; instances?: Record<string, unknown> };
  target: { type: string; hostname?: string; tags?: string[] };
  infrastructureType: string;
  lastEvent?: { outcome: string; receivedAt: string } | null;
}

/** `pitcrew rules …`: the tenant's rules from a terminal, every trigger and action kind alike. */
export async function runRules(args: string[], env: ClientConfig, out: (line: string) => void): Promise<number> {
  const [verb, ...rest] = args;
  if (verb === 'run') return runRuleNow(rest, env, out);
  const options = { server: { type: 'string' }, token: { type: 'string' }, json: { type: 'boolean' }, file: { type: 'string' }, search: { type: 'string' } } as const;
  const { values, positionals } = parseArgs({ args: rest, options, strict: true, allowPositionals: true });
  const { client, show } = apiCommand(values, env, out);
  const id = () => {
    if (positionals.length !== 1) throw new CliError(`${verb} needs the rule id (npx pitcrew rules list shows them)\n\n${RULES_USAGE}`, 2);
    return encodeURIComponent(positionals[0]!);
  };
  switch (verb) {
    case 'list': {
      const query = new URLSearchParams({ limit: '1000', ...(values.search ? { search: values.search } : {}) });
      const page = (await callApi(client, 'GET', `/api/v1/rules?${query}`)) as { items: RuleView[] };
      show(page, table(['ID', 'NAME', 'ON', 'TRIGGER', 'ACTION', 'TARGET', 'LAST EVENT'], page.items.map(describe)));
      return 0;
    }
    case 'show': {
      const rule = (await callApi(client, 'GET', `/api/v1/rules/${id()}`)) as RuleView;
      out(JSON.stringify(rule, null, 2));
      return 0;
    }
    case 'create': {
      if (!values.file || (values.file !== '-' && !values.file.startsWith('@'))) throw new CliError(`create needs --file @FILE or --file - (stdin): the rule's JSON\n\n${RULES_USAGE}`, 2);
      const made = (await callApi(client, 'POST', '/api/v1/rules', readJsonOption('--file', values.file))) as RuleView;
      const curl = made.trigger.curl ? `\nfire it: ${made.trigger.curl}` : '';
      show(made, `created rule "${made.name}" (${made.id}): ${describe(made).slice(3, 6).join(', ')}${curl}`);
      return 0;
    }
    case 'enable':
    case 'disable': {
      const rule = (await callApi(client, 'PATCH', `/api/v1/rules/${id()}`, { enabled: verb === 'enable' })) as RuleView;
      show(rule, verb === 'enable' ? `rule "${rule.name}" is on: its events act` : `rule "${rule.name}" is off: its events are recorded, nothing runs`);
      return 0;
    }
    case 'delete': {
      await callApi(client, 'DELETE', `/api/v1/rules/${id()}`);
      show({ deleted: positionals[0] }, `deleted rule ${positionals[0]}`);
      return 0;
    }
    default:
      throw unknownSubcommand(verb, RULES_USAGE);
  }
}

/** The cloud a rule's infrastructure type implies when its action names none. */
const PROVIDERS: Record<string, string> = { CLOUD_EC2: 'aws', CLOUD_AZURE: 'azure', CLOUD_GCP: 'gcp', CLOUD_OPENSTACK: 'openstack' };

function describe(rule: RuleView): string[] {
  const { trigger, action, target } = rule;
  const when = trigger.type === 'cron' ? `cron ${trigger.schedule ?? ''}` : trigger.type;
  const provider = action.provider ?? PROVIDERS[rule.infrastructureType];
  const does = action.type === 'cloud' ? `cloud ${action.operation ?? ''}${provider ? ` (${provider})` : ''}` : action.type === 'script' ? `script (${action.flavour ?? ''})` : action.type;
  const where = target.type === 'specific_host' ? `host ${target.hostname ?? ''}` : target.type === 'specific_tags' ? `tags ${(target.tags ?? []).join(',')}` : target.type;
  const last = rule.lastEvent ? `${rule.lastEvent.outcome} ${rule.lastEvent.receivedAt}` : 'never';
  return [rule.id, rule.name, rule.enabled ? 'on' : 'off', when, does, where, last];
}
