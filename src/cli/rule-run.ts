import { parseArgs } from 'node:util';
import type { Static } from 'typebox';
import type { ClientConfig } from '../config/config.js';
import type { Accepted } from '../ingress/webhook-reply.js';
import { apiCommand, callApi, CliError, readJsonOption } from './client.js';

export const RULE_RUN_USAGE = `  run ID [--host NAME] [--alarm NAME] [--set KEY=VALUE]... [--payload JSON|@FILE|-] [--dry-run]
                                         run it now, as its trigger would (source manual, recorded with your
                                         token): HostName, AlarmName, MetaData pairs; --dry-run records, runs nothing`;

/** The webhook's 202, which Run now answers with. */
type RunReply = Static<typeof Accepted>;

/** `pitcrew rules run ID …`: POST /api/v1/rules/{id}/run with a payload made of the flags. */
export async function runRuleNow(args: string[], env: ClientConfig, out: (line: string) => void): Promise<number> {
  const options = {
    server: { type: 'string' }, token: { type: 'string' }, json: { type: 'boolean' },
    host: { type: 'string' }, alarm: { type: 'string' }, set: { type: 'string', multiple: true }, payload: { type: 'string' }, 'dry-run': { type: 'boolean' },
  } as const;
  const { values, positionals } = parseArgs({ args, options, strict: true, allowPositionals: true });
  if (positionals.length !== 1) throw new CliError(`run needs the rule id (npx pitcrew rules list shows them)\n\nusage: pitcrew rules\n${RULE_RUN_USAGE}`, 2);
  const { client, show } = apiCommand(values, env, out);
  const body = { payload: payloadOf(values), ...(values['dry-run'] ? { act: false } : {}) };
  const reply = (await callApi(client, 'POST', `/api/v1/rules/${encodeURIComponent(positionals[0]!)}/run`, body)) as RunReply;
  show(reply, describeRun(reply));
  return 0;
}

/** The payload: --payload's object, with --host, --alarm and each --set (a MetaData pair) over it. */
function payloadOf(values: { host?: string | undefined; alarm?: string | undefined; set?: string[] | undefined; payload?: string | undefined }): Record<string, unknown> {
  const given = values.payload === undefined ? {} : readJsonOption('--payload', values.payload);
  if (typeof given !== 'object' || given === null || Array.isArray(given)) throw new CliError('--payload must be a JSON object such as {"HostName":"web-1"}', 2);
  const payload = { ...(given as Record<string, unknown>) };
  if (values.host !== undefined) payload.HostName = values.host;
  if (values.alarm !== undefined) payload.AlarmName = values.alarm;
  if (values.set?.length) payload.MetaData = { ...(payload.MetaData as Record<string, unknown> | undefined), ...Object.fromEntries(values.set.map(pairOf)) };
  return payload;
}

function pairOf(text: string): [string, string] {
  const at = text.indexOf('=');
  if (at < 1) throw new CliError(`--set takes KEY=VALUE (a MetaData pair the runbook gets as $KEY), got "${text}"`, 2);
  return [text.slice(0, at), text.slice(at + 1)];
}

function describeRun(reply: RunReply): string {
  const lines = [`event ${reply.eventId}: ${reply.outcome}${reply.reason ? ` (${reply.reason})` : ''}${reply.replayed ? ', the original of an earlier run with the same Idempotency-Key' : ''}`];
  if (reply.executionCount === 0) lines.push(reply.act ? 'nothing ran' : 'a dry run: recorded, nothing ran');
  else {
    const more = reply.executionCount - reply.executionIds.length;
    lines.push(`executions: ${reply.executionIds.join(' ')}${more > 0 ? ` and ${more} more (npx pitcrew executions list --event ${reply.eventId})` : ''}`);
    lines.push(`follow one: npx pitcrew executions show ${reply.executionIds[0]}`);
  }
  for (const skipped of reply.skippedEnv) lines.push(`not exported: ${skipped.name}: ${skipped.reason}`);
  return lines.join('\n');
}
