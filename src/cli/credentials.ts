import { parseArgs } from 'node:util';
import type { ClientConfig } from '../config/config.js';
import { apiCommand, callApi, CliError, readJsonOption, unknownSubcommand } from './client.js';
import { table } from './table.js';

export const CREDENTIALS_USAGE = `usage: pitcrew credentials <list|create|test|rotate|delete> [options]

  list                                       the tenant's cloud credentials: provider, what identifies each, last test
  create --name NAME --provider PROVIDER --secret @FILE|-
                                             PROVIDER: aws, azure, gcp, openstack; the secret is JSON in the
                                             provider's shape (docs/credentials.md), read from a file or stdin,
                                             never from the command line, where the process list would show it
  test ID                                    one harmless read at the provider with it (AWS: ec2:DescribeRegions)
  rotate ID --secret @FILE|-                 replace its secret whole (a rotated key)
  delete ID                                  delete it (refused while a rule uses it)

options: --server URL (PITCREW_SERVER), --token TOKEN (PITCREW_TOKEN), --json`;

interface CredentialView {
  id: string;
  name: string;
  provider: string;
  summary: Record<string, string>;
  lastTest: { at: string; ok: boolean; message: string } | null;
}

/** `pitcrew credentials …`: the credentials vault from a terminal; a secret goes in, never comes out. */
export async function runCredentials(args: string[], env: ClientConfig, out: (line: string) => void): Promise<number> {
  const [verb, ...rest] = args;
  const options = { server: { type: 'string' }, token: { type: 'string' }, json: { type: 'boolean' }, name: { type: 'string' }, provider: { type: 'string' }, secret: { type: 'string' } } as const;
  const { values, positionals } = parseArgs({ args: rest, options, strict: true, allowPositionals: true });
  const { client, show } = apiCommand(values, env, out);
  const id = () => {
    if (positionals.length !== 1) throw new CliError(`${verb} needs the credential id (npx pitcrew credentials list shows them)\n\n${CREDENTIALS_USAGE}`, 2);
    return encodeURIComponent(positionals[0]!);
  };
  const secret = () => {
    if (!values.secret) throw new CliError(`${verb} needs --secret @FILE or --secret - (stdin)\n\n${CREDENTIALS_USAGE}`, 2);
    if (values.secret !== '-' && !values.secret.startsWith('@')) throw new CliError('--secret takes @FILE or - (stdin), never the secret itself: the process list would show it', 2);
    return readJsonOption('--secret', values.secret);
  };
  switch (verb) {
    case 'list': {
      const page = (await callApi(client, 'GET', '/api/v1/credentials?limit=1000')) as { items: CredentialView[] };
      show(page, table(['ID', 'NAME', 'PROVIDER', 'IDENTIFIES', 'LAST TEST'], page.items.map(describe)));
      return 0;
    }
    case 'create': {
      if (!values.name || !values.provider) throw new CliError(`create needs --name NAME and --provider PROVIDER\n\n${CREDENTIALS_USAGE}`, 2);
      const made = (await callApi(client, 'POST', '/api/v1/credentials', { name: values.name, provider: values.provider, secret: secret() })) as CredentialView;
      show(made, `stored ${made.provider} credential "${made.name}" (${made.id}), sealed; try it: npx pitcrew credentials test ${made.id}`);
      return 0;
    }
    case 'test': {
      const tested = (await callApi(client, 'POST', `/api/v1/credentials/${id()}/test`)) as { call: string; message: string; durationMs: number };
      show(tested, `ok: ${tested.message} (${tested.call}, ${tested.durationMs} ms)`);
      return 0;
    }
    case 'rotate': {
      const rotated = (await callApi(client, 'PATCH', `/api/v1/credentials/${id()}`, { secret: secret() })) as CredentialView;
      show(rotated, `replaced the secret of "${rotated.name}"; test it again: npx pitcrew credentials test ${rotated.id}`);
      return 0;
    }
    case 'delete': {
      await callApi(client, 'DELETE', `/api/v1/credentials/${id()}`);
      show({ deleted: positionals[0] }, `deleted credential ${positionals[0]}: its sealed secret is gone`);
      return 0;
    }
    default:
      throw unknownSubcommand(verb, CREDENTIALS_USAGE);
  }
}

function describe(credential: CredentialView): string[] {
  const identifies = Object.entries(credential.summary).map(([key, value]) => `${key}=${value}`).join(' ');
  const test = credential.lastTest ? `${credential.lastTest.ok ? 'ok' : 'failed'} ${credential.lastTest.at}` : 'never';
  return [credential.id, credential.name, credential.provider, identifies, test];
}
