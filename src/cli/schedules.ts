import { parseArgs } from 'node:util';
import type { ClientConfig } from '../config/config.js';
import { apiCommand, callApi, CliError, unknownSubcommand } from './client.js';
import { table } from './table.js';

export const SCHEDULES_USAGE = `usage: pitcrew schedules <list|next|pause|resume> [options]

  list                                   the cron rules: schedule, zone, next tick, last tick and what it did
  next "EXPR" [--timezone ZONE] [--count N]
                                         when a schedule would fire, as the service computes it (5 fields,
                                         or 6 with seconds first; ZONE an IANA zone, default UTC)
  pause RULE_ID                          no tick fires until it is resumed (ticks meanwhile are not caught up)
  resume RULE_ID                         fires again from the next tick after now

docs/scheduler.md has the rules for daylight saving, overlap and missed ticks.
options: --server URL (PITCREW_SERVER), --token TOKEN (PITCREW_TOKEN), --json`;

interface CronRuleView {
  id: string;
  name: string;
  enabled: boolean;
  trigger: { type: string; schedule?: string; timezone?: string; overlap?: string };
  lastEvent: { outcome: string; receivedAt: string } | null;
  schedule?: { nextTicks: string[]; waitingTick: string | null };
}

/** `pitcrew schedules …`: cron rules and their ticks, through the API. */
export async function runSchedules(args: string[], env: ClientConfig, out: (line: string) => void): Promise<number> {
  const [verb, ...rest] = args;
  const options = { server: { type: 'string' }, token: { type: 'string' }, json: { type: 'boolean' }, timezone: { type: 'string' }, count: { type: 'string' } } as const;
  const { values, positionals } = parseArgs({ args: rest, options, strict: true, allowPositionals: true });
  const { client, show } = apiCommand(values, env, out);
  switch (verb) {
    case 'list': {
      const page = (await callApi(client, 'GET', '/api/v1/rules?triggerType=cron&limit=1000')) as { items: CronRuleView[] };
      show(page, table(['ID', 'NAME', 'SCHEDULE', 'ZONE', 'NEXT TICK', 'LAST TICK'], page.items.map(describe)));
      return 0;
    }
    case 'next': {
      if (positionals.length !== 1) throw new CliError(`next needs one schedule, quoted: pitcrew schedules next "*/5 * * * *"\n\n${SCHEDULES_USAGE}`, 2);
      const count = values.count ?? '5';
      if (!/^[1-9]\d?$/.test(count) || Number(count) > 50) throw new CliError('--count must be a whole number from 1 to 50', 2);
      const body = { schedule: positionals[0], count: Number(count), ...(values.timezone ? { timezone: values.timezone } : {}) };
      const preview = (await callApi(client, 'POST', '/api/v1/schedules/preview', body)) as { timezone: string; ticks: Array<{ at: string; local: string }> };
      show(preview, preview.ticks.map((tick) => `${tick.local}  (${tick.at})`).join('\n'));
      return 0;
    }
    case 'pause':
    case 'resume': {
      if (positionals.length !== 1) throw new CliError(`${verb} needs the rule id\n\n${SCHEDULES_USAGE}`, 2);
      const rule = (await callApi(client, 'PATCH', `/api/v1/rules/${encodeURIComponent(positionals[0]!)}`, { enabled: verb === 'resume' })) as CronRuleView;
      const next = rule.schedule?.nextTicks[0];
      show(rule, verb === 'pause' ? `paused "${rule.name}": no tick fires until it is resumed` : `resumed "${rule.name}": next tick ${next ?? 'none (the schedule has no more)'}`);
      return 0;
    }
    default:
      throw unknownSubcommand(verb, SCHEDULES_USAGE);
  }
}

function describe(rule: CronRuleView): string[] {
  const next = rule.enabled ? (rule.schedule?.nextTicks[0] ?? 'none') : 'paused';
  const waiting = rule.schedule?.waitingTick ? ` (${rule.schedule.waitingTick} waits)` : '';
  const last = rule.lastEvent ? `${rule.lastEvent.receivedAt} ${rule.lastEvent.outcome}` : 'never';
  return [rule.id, rule.name, rule.trigger.schedule ?? '-', rule.trigger.timezone ?? 'UTC', next + waiting, last];
}
