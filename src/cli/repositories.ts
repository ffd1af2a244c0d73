import fs from 'node:fs';
import { parseArgs } from 'node:util';
import type { ClientConfig } from '../config/config.js';
import { apiCommand, callApi, CliError, unknownSubcommand } from './client.js';
import { table } from './table.js';

export const REPOSITORIES_USAGE = `usage: pitcrew repositories <list|show|create|test|files|delete> [options]

  list                                   the git repositories runbooks are read from: URL, ref, credential kind, last test
  show ID                                one repository, with its SSH host keys and its last test
  create --name NAME --url URL --ref REF [--repo-token @FILE|- [--username NAME]] [--ssh-key @FILE|-] [--known-hosts @FILE]
                                         connect a repository, read-only: HTTPS with a token that may read it, or
                                         SSH with a deploy key and the server's host keys (ssh-keyscan prints them).
                                         The token and the key are read from a file or stdin, never from the
                                         command line, where the process list would show them
  test ID                                ask the server where the ref is now (nothing else is read)
  files ID [--ref REF]                   the files at the ref, to pick a runbook's path from
  delete ID                              delete it and its cache (refused while a rule reads runbooks from it)

options: --server URL (PITCREW_SERVER), --token TOKEN (PITCREW_TOKEN), --json`;

interface RepositoryView {
  id: string;
  name: string;
  url: string;
  ref: string;
  auth: string;
  knownHosts: string | null;
  lastTest: { at: string; ok: boolean; message: string; commit?: string } | null;
}

/** `pitcrew repositories …`: the tenant's git repositories from a terminal; a credential goes in, never comes out. */
export async function runRepositories(args: string[], env: ClientConfig, out: (line: string) => void): Promise<number> {
  const [verb, ...rest] = args;
  const text = { type: 'string' } as const;
  // --token is the management token (every API command's); the repository's own token is --repo-token.
  const options = { server: text, token: text, json: { type: 'boolean' }, name: text, url: text, ref: text, 'repo-token': text, username: text, 'ssh-key': text, 'known-hosts': text } as const;
  const { values, positionals } = parseArgs({ args: rest, options, strict: true, allowPositionals: true });
  const { client, show } = apiCommand(values, env, out);
  const id = () => {
    if (positionals.length !== 1) throw new CliError(`${verb} needs the repository id (npx pitcrew repositories list shows them)\n\n${REPOSITORIES_USAGE}`, 2);
    return encodeURIComponent(positionals[0]!);
  };
  switch (verb) {
    case 'list': {
      const page = (await callApi(client, 'GET', '/api/v1/repositories?limit=1000')) as { items: RepositoryView[] };
      const rows = page.items.map((r) => [r.id, r.name, r.url, r.ref, r.auth, lastTest(r)]);
      show(page, table(['ID', 'NAME', 'URL', 'REF', 'CREDENTIAL', 'LAST TEST'], rows));
      return 0;
    }
    case 'show': {
      const repository = (await callApi(client, 'GET', `/api/v1/repositories/${id()}`)) as RepositoryView;
      const lines = [
        `repository "${repository.name}" (${repository.id})`,
        `url         ${repository.url}`,
        `ref         ${repository.ref}`,
        `credential  ${repository.auth === 'none' ? 'none' : repository.auth === 'token' ? 'a token (sealed)' : 'an SSH key (sealed)'}`,
        `last test   ${repository.lastTest ? `${lastTest(repository)}: ${repository.lastTest.message}` : 'never'}`,
        ...(repository.knownHosts ? ['host keys', ...repository.knownHosts.trim().split('\n').map((line) => `  ${line}`)] : []),
      ];
      show(repository, lines.join('\n'));
      return 0;
    }
    case 'create': {
      if (!values.name || !values.url || !values.ref) throw new CliError(`create needs --name NAME, --url URL and --ref REF\n\n${REPOSITORIES_USAGE}`, 2);
      if (values['repo-token'] !== undefined && values['ssh-key'] !== undefined) throw new CliError('give --repo-token (HTTPS) or --ssh-key (SSH), not both', 2);
      const credential = values['repo-token'] !== undefined
        ? { token: secretFile('--repo-token', values['repo-token']).trim(), ...(values.username ? { username: values.username } : {}) }
        : values['ssh-key'] !== undefined ? { sshPrivateKey: secretFile('--ssh-key', values['ssh-key']) } : undefined;
      const body = {
        name: values.name, url: values.url, ref: values.ref,
        ...(credential ? { credential } : {}),
        ...(values['known-hosts'] !== undefined ? { knownHosts: secretFile('--known-hosts', values['known-hosts']) } : {}),
      };
      const made = (await callApi(client, 'POST', '/api/v1/repositories', body)) as RepositoryView;
      show(made, `connected repository "${made.name}" (${made.id}) at ${made.ref}; try it: npx pitcrew repositories test ${made.id}`);
      return 0;
    }
    case 'test': {
      const tested = (await callApi(client, 'POST', `/api/v1/repositories/${id()}/test`)) as { ok: boolean; message: string };
      show(tested, `${tested.ok ? 'ok' : 'failed'}: ${tested.message}`);
      return tested.ok ? 0 : 1;
    }
    case 'files': {
      const query = values.ref ? `?${new URLSearchParams({ ref: values.ref })}` : '';
      const listed = (await callApi(client, 'GET', `/api/v1/repositories/${id()}/files${query}`)) as { ok: boolean; message: string; files: string[] };
      show(listed, listed.ok ? [`${listed.message}:`, ...listed.files].join('\n') : `failed: ${listed.message}`);
      return listed.ok ? 0 : 1;
    }
    case 'delete': {
      await callApi(client, 'DELETE', `/api/v1/repositories/${id()}`);
      show({ deleted: positionals[0] }, `deleted repository ${positionals[0]}: its sealed credential and its cache are gone`);
      return 0;
    }
    default:
      throw unknownSubcommand(verb, REPOSITORIES_USAGE);
  }
}

function lastTest(repository: RepositoryView): string {
  return repository.lastTest ? `${repository.lastTest.ok ? 'ok' : 'failed'} ${repository.lastTest.at}` : 'never';
}

/** A file's text (@FILE) or stdin (-): never the value itself, which the process list would show. */
function secretFile(flag: string, value: string): string {
  if (value !== '-' && !value.startsWith('@')) throw new CliError(`${flag} takes @FILE or - (stdin), never the value itself: the process list would show it`, 2);
  try {
    return fs.readFileSync(value === '-' ? 0 : value.slice(1), 'utf8');
  } catch (error) {
    throw new CliError(`cannot read ${value === '-' ? 'stdin' : value.slice(1)}: ${(error as Error).message}`, 2);
  }
}
