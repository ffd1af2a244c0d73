import type { ExecutionView } from '../executions/presenter.js';
import { parseArgs } from 'node:util';
import type { ClientConfig } from '../config/config.js';
import { apiCommand, callApi, CliError, unknownSubcommand } from './client.js';
import { table } from './table.js';

export const EXECUTIONS_USAGE = `usage: pitcrew executions <list|show|cancel> [options]

  list [--rule ID] [--event ID] [--host NAME] [--state STATE] [--limit N]
                                         newest first: where each ran, its state, and why
  show ID                                one execution: its states, exit code, reason and output
  cancel ID                              a queued one ends at once; a running one is stopped (an agent's
                                         process group, a CLI runbook's, a cloud call's wait)

STATE: queued, dispatched, running, succeeded, failed, timed_out, cancelled, lost, expired
options: --server URL (PITCREW_SERVER), --token TOKEN (PITCREW_TOKEN), --json`;


/** `pitcrew executions …`: what ran where, and a way to stop it, from a terminal. */
export async function runExecutions(args: string[], env: ClientConfig, out: (line: string) => void): Promise<number> {
  const [verb, ...rest] = args;
  const options = {
    server: { type: 'string' }, token: { type: 'string' }, json: { type: 'boolean' },
    rule: { type: 'string' }, event: { type: 'string' }, host: { type: 'string' }, state: { type: 'string' }, limit: { type: 'string' },
  } as const;
  const { values, positionals } = parseArgs({ args: rest, options, strict: true, allowPositionals: true });
  const { client, show } = apiCommand(values, env, out);
  const id = () => {
    if (positionals.length !== 1) throw new CliError(`${verb} needs the execution id (npx pitcrew executions list shows them)\n\n${EXECUTIONS_USAGE}`, 2);
    return encodeURIComponent(positionals[0]!);
  };
  switch (verb) {
    case 'list': {
      const limit = values.limit ?? '50';
      if (!/^\d+$/.test(limit) || Number(limit) < 1 || Number(limit) > 1000) throw new CliError('--limit must be a whole number from 1 to 1000', 2);
      const filters = { ruleId: values.rule, eventId: values.event, hostname: values.host, state: values.state };
      const query = new URLSearchParams({ limit, ...Object.fromEntries(Object.entries(filters).filter((entry): entry is [string, string] => entry[1] !== undefined)) });
      const page = (await callApi(client, 'GET', `/api/v1/executions?${query}`)) as { items: ExecutionView[] };
      show(page, table(['ID', 'STATE', 'KIND', 'WHERE', 'QUEUED', 'REASON'], page.items.map(line)));
      return 0;
    }
    case 'show': {
      const execution = (await callApi(client, 'GET', `/api/v1/executions/${id()}`)) as ExecutionView;
      show(execution, detail(execution));
      return 0;
    }
    case 'cancel': {
      const execution = (await callApi(client, 'POST', `/api/v1/executions/${id()}/cancel`)) as ExecutionView;
      const words = execution.state === 'cancelled' ? 'cancelled' : `cancel requested (it is ${execution.state}; it stops shortly: npx pitcrew executions show ${execution.id})`;
      show(execution, `${words}: execution ${execution.id} on ${execution.hostname}`);
      return 0;
    }
    default:
      throw unknownSubcommand(verb, EXECUTIONS_USAGE);
  }
}

function line(execution: ExecutionView): string[] {
  return [execution.id, execution.state, execution.actionType, execution.hostname, execution.queuedAt, (execution.reason ?? '').split('\n')[0]!.slice(0, 160)];
}

/** Which runbook ran, as the execution recorded it: a stored version, a git commit's file, or the rule's own script. */
function runbookLine(runbook: NonNullable<ExecutionView['runbook']>): string {
  const hash = runbook.sha256 ? `sha256 ${runbook.sha256}` : 'not read yet';
  if (runbook.runbookId) return `"${runbook.name ?? runbook.runbookId}" version ${runbook.version} (${runbook.runbookId}), ${hash}`;
  if (runbook.repositoryId) {
    const at = runbook.commit ? ` @ ${runbook.commit.slice(0, 12)}` : '';
    return `${runbook.path} in repository "${runbook.repositoryName ?? runbook.repositoryId}"${at}${runbook.ref ? ` (${runbook.ref})` : ''}, ${hash}`;
  }
  return `the rule's own script, ${hash}`;
}

function detail(execution: ExecutionView): string {
  const lines = [
    `execution ${execution.id} (${execution.actionType}) on ${execution.hostname}: ${execution.state}${execution.exitCode === null ? '' : `, exit code ${execution.exitCode}`}`,
    ...(execution.reason ? [`reason: ${execution.reason}`] : []),
    ...(execution.runbook ? [`runbook: ${runbookLine(execution.runbook)}`] : []),
    ...(execution.transitions ?? []).map((t) => `  ${t.at}  ${t.from ?? '-'} → ${t.to}${t.reason ? `: ${t.reason}` : ''}`),
  ];
  if (execution.stdout) lines.push('--- stdout', execution.stdout.replace(/\n$/, ''));
  if (execution.stderr) lines.push('--- stderr', execution.stderr.replace(/\n$/, ''));
  return lines.join('\n');
}
