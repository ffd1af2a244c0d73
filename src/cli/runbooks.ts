import fs from 'node:fs';
import { parseArgs } from 'node:util';
import type { ClientConfig } from '../config/config.js';
import { apiCommand, callApi, CliError, unknownSubcommand } from './client.js';
import { table } from './table.js';

export const RUNBOOKS_USAGE = `usage: pitcrew runbooks <list|show|create|update|versions|diff|delete|library|install> [options]

  list [--search TEXT]                   the runbooks: latest version, interpreter, the environment each expects
  show ID [--version N]                  a runbook's notes and script: the latest version, or version N
  create --name NAME --file @SCRIPT|- [--interpreter sh|bash|python|pwsh] [--description @FILE.md|TEXT] [--env A,B]
                                         store a runbook (the script from a file or stdin) as its version 1
  update ID [--file @SCRIPT|-] [--name NAME] [--interpreter I] [--description @FILE.md|TEXT] [--env A,B]
                                         save its next version; what is not given stays as in the latest
                                         version (--env '' expects none); a save equal to it saves nothing
  versions ID                            its versions, newest first: when, by which token, the script's sha256
  diff ID [--from N] [--to M]            what changed between two versions, the scripts as a unified diff
                                         (default: the latest version against the one before)
  delete ID                              delete it and every version of it, for good
  library [SLUG]                         the starter runbooks shipped with pitcrew; with SLUG, one's notes and script
  install SLUG [--name NAME]             save a copy of a starter runbook in this tenant's store (version 1),
                                         under its library name or NAME

options: --server URL (PITCREW_SERVER), --token TOKEN (PITCREW_TOKEN), --json`;

interface LibraryEntry {
  slug: string;
  name: string;
  description: string;
  interpreter: string;
  env: string[];
  sha256: string;
  script?: string;
}

interface RunbookView {
  id: string;
  name: string;
  version: number;
  description: string;
  interpreter: string;
  script: string;
  env: string[];
  sha256: string;
  updatedAt: string;
  versionCreated?: boolean;
}

type VersionSummary = Pick<RunbookView, 'version' | 'name' | 'interpreter' | 'sha256'> & { createdAt: string; createdBy: string | null };

/** `pitcrew runbooks …`: the tenant's runbook store from a terminal; scripts go in from files, never the command line. */
export async function runRunbooks(args: string[], env: ClientConfig, out: (line: string) => void): Promise<number> {
  const [verb, ...rest] = args;
  const text = { type: 'string' } as const;
  const options = { server: text, token: text, json: { type: 'boolean' }, search: text, version: text, name: text, file: text, interpreter: text, description: text, env: text, from: text, to: text } as const;
  const { values, positionals } = parseArgs({ args: rest, options, strict: true, allowPositionals: true });
  const { client, show } = apiCommand(values, env, out);
  const id = () => {
    if (positionals.length !== 1) throw new CliError(`${verb} needs the runbook id (npx pitcrew runbooks list shows them)\n\n${RUNBOOKS_USAGE}`, 2);
    return encodeURIComponent(positionals[0]!);
  };
  // The fields given on the command line, as the API names them.
  const given = () => ({
    ...(values.name === undefined ? {} : { name: values.name }),
    ...(values.file === undefined ? {} : { script: readScript(values.file) }),
    ...(values.interpreter === undefined ? {} : { interpreter: values.interpreter }),
    ...(values.description === undefined ? {} : { description: readText(values.description) }),
    ...(values.env === undefined ? {} : { env: values.env.split(',').map((name) => name.trim()).filter((name) => name !== '') }),
  });
  switch (verb) {
    case 'list': {
      const query = new URLSearchParams({ limit: '1000', ...(values.search ? { search: values.search } : {}) });
      const page = (await callApi(client, 'GET', `/api/v1/runbooks?${query}`)) as { items: RunbookView[] };
      const rows = page.items.map((r) => [r.id, r.name, `v${r.version}`, r.interpreter, r.env.join(',') || '-', r.updatedAt]);
      show(page, table(['ID', 'NAME', 'VERSION', 'INTERPRETER', 'ENV', 'UPDATED'], rows));
      return 0;
    }
    case 'show': {
      const path = values.version === undefined ? `/api/v1/runbooks/${id()}` : `/api/v1/runbooks/${id()}/versions/${versionNumber('--version', values.version)}`;
      const runbook = (await callApi(client, 'GET', path)) as RunbookView;
      const head = `runbook "${runbook.name}", version ${runbook.version}, ${runbook.interpreter}, sha256 ${runbook.sha256}`;
      const expects = runbook.env.length > 0 ? `\nexpects: ${runbook.env.join(', ')}` : '';
      const notes = runbook.description ? `\n\n${runbook.description.trimEnd()}` : '';
      show(runbook, `${head}${expects}${notes}\n\n${runbook.script.trimEnd()}`);
      return 0;
    }
    case 'create': {
      if (!values.name || !values.file) throw new CliError(`create needs --name NAME and --file @SCRIPT (or --file - for stdin)\n\n${RUNBOOKS_USAGE}`, 2);
      const made = (await callApi(client, 'POST', '/api/v1/runbooks', given())) as RunbookView;
      show(made, `stored runbook "${made.name}" (${made.id}) as version 1, sha256 ${made.sha256}`);
      return 0;
    }
    case 'update': {
      const runbookId = id();
      const changes = given();
      if (Object.keys(changes).length === 0) throw new CliError(`update needs what to change: --file, --name, --interpreter, --description or --env\n\n${RUNBOOKS_USAGE}`, 2);
      const latest = (await callApi(client, 'GET', `/api/v1/runbooks/${runbookId}`)) as RunbookView;
      const body = { name: latest.name, description: latest.description, interpreter: latest.interpreter, script: latest.script, env: latest.env, ...changes };
      const saved = (await callApi(client, 'PUT', `/api/v1/runbooks/${runbookId}`, body)) as RunbookView;
      show(saved, saved.versionCreated
        ? `saved runbook "${saved.name}" as version ${saved.version}, sha256 ${saved.sha256}`
        : `runbook "${saved.name}" is unchanged: the same as its version ${saved.version}, nothing saved`);
      return 0;
    }
    case 'versions': {
      const page = (await callApi(client, 'GET', `/api/v1/runbooks/${id()}/versions?limit=1000`)) as { items: VersionSummary[] };
      const rows = page.items.map((v) => [`v${v.version}`, v.createdAt, v.createdBy ?? '-', v.interpreter, v.sha256.slice(0, 12), v.name]);
      show(page, table(['VERSION', 'SAVED', 'BY', 'INTERPRETER', 'SHA256', 'NAME'], rows));
      return 0;
    }
    case 'diff': {
      const query = new URLSearchParams({
        ...(values.from === undefined ? {} : { from: String(versionNumber('--from', values.from)) }),
        ...(values.to === undefined ? {} : { to: String(versionNumber('--to', values.to)) }),
      });
      const diff = (await callApi(client, 'GET', `/api/v1/runbooks/${id()}/diff?${query}`)) as { from: number; to: number; changed: string[]; diff: string };
      const changed = diff.changed.length > 0 ? `changed from version ${diff.from} to ${diff.to}: ${diff.changed.join(', ')}` : `versions ${diff.from} and ${diff.to} are the same`;
      show(diff, `${changed}${diff.diff ? `\n${diff.diff.trimEnd()}` : ''}`);
      return 0;
    }
    case 'delete': {
      await callApi(client, 'DELETE', `/api/v1/runbooks/${id()}`);
      show({ deleted: positionals[0] }, `deleted runbook ${positionals[0]} and every version of it`);
      return 0;
    }
    case 'library': {
      if (positionals.length > 1) throw new CliError(`library takes at most one slug\n\n${RUNBOOKS_USAGE}`, 2);
      if (positionals.length === 0) {
        const library = (await callApi(client, 'GET', '/api/v1/runbook-library')) as { items: LibraryEntry[] };
        show(library, table(['SLUG', 'NAME', 'INTERPRETER', 'ENV'], library.items.map((r) => [r.slug, r.name, r.interpreter, r.env.join(',') || '-'])));
        return 0;
      }
      const entry = (await callApi(client, 'GET', `/api/v1/runbook-library/${encodeURIComponent(positionals[0]!)}`)) as LibraryEntry;
      const reads = entry.env.length > 0 ? `\nreads: ${entry.env.join(', ')}` : '';
      show(entry, `library runbook ${entry.slug}: "${entry.name}", ${entry.interpreter}, sha256 ${entry.sha256}${reads}\n\n${entry.description.trimEnd()}\n\n${entry.script!.trimEnd()}`);
      return 0;
    }
    case 'install': {
      if (positionals.length !== 1) throw new CliError(`install needs the library runbook's slug (npx pitcrew runbooks library lists them)\n\n${RUNBOOKS_USAGE}`, 2);
      const slug = positionals[0]!;
      const body = values.name === undefined ? {} : { name: values.name };
      const made = (await callApi(client, 'POST', `/api/v1/runbook-library/${encodeURIComponent(slug)}/install`, body)) as RunbookView;
      show(made, `installed "${slug}" as runbook "${made.name}" (${made.id}), version 1, sha256 ${made.sha256}`);
      return 0;
    }
    default:
      throw unknownSubcommand(verb, RUNBOOKS_USAGE);
  }
}

function versionNumber(flag: string, value: string): number {
  if (!/^[1-9][0-9]*$/.test(value)) throw new CliError(`${flag} takes a version number (1, 2, …); npx pitcrew runbooks versions ID lists them`, 2);
  return Number(value);
}

/** A script: from a file (@FILE) or stdin (-), byte for byte. */
function readScript(value: string): string {
  if (value !== '-' && !value.startsWith('@')) throw new CliError('--file takes @FILE (the script\'s path after @) or - (stdin)', 2);
  return readText(value);
}

/** An option's text: from a file (@FILE), stdin (-), or as given. */
function readText(value: string): string {
  if (value !== '-' && !value.startsWith('@')) return value;
  const file = value === '-' ? 0 : value.slice(1);
  try {
    return fs.readFileSync(file, 'utf8');
  } catch (error) {
    throw new CliError(`cannot read ${value === '-' ? 'stdin' : value.slice(1)}: ${(error as Error).message}`, 2);
  }
}
