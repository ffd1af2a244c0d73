import { parseArgs } from 'node:util';
import { ConfigError, loadClientConfig, loadConfig } from '../config/config.js';
import { API_COMMANDS } from './api-commands.js';
import { runBootstrap } from './bootstrap.js';
import { CliError } from './client.js';
import { runMigrate } from './migrate.js';

const USAGE = `usage: pitcrew <command> [options]

commands:
  server                          run the service (HTTP on PORT, default 8080; data in PITCREW_DATA_DIR)
  bootstrap --json [--tenant NAME] [--new]
                                   create the tenant and its first owner; print its API key (webhook and enrol), the
                                   owner's personal access token and one-time sign-in link; for a tenant that exists,
                                   --new issues another key and token (the earlier stay valid)
  migrate                         apply database migrations and exit
  backup FILE [--json]            a consistent copy of the SQLite database while the service runs; prints what it
                                   holds and which secret key opens its secrets
  restore FILE [--secret-key-file PATH]
                                   a backup into an empty PITCREW_DATA_DIR (refuses a non-empty one, and a backup
                                   of a newer pitcrew)
  secrets rotate [--batch N] [--pause-ms MS]
                                   seal every stored secret again with PITCREW_SECRET_KEY, opening each with
                                   PITCREW_SECRET_KEY_PREVIOUS; online and resumable (npx pitcrew secrets --help)
  agent --server https://HOST:PORT --api-key KEY [...]   run the agent on this host (npx pitcrew agent --help)
  api-keys list|create|narrow       API keys and their scopes (webhook, enrol), through the API (npx pitcrew api-keys --help)
  channels list|create|test|delete  notification channels, through the API (npx pitcrew channels --help)
  integrations list|create|alerts|test|delete
                                   monitoring tools' alerts, through the API (npx pitcrew integrations --help)
  rules list|show|create|enable|disable|delete|run
                                   rules of every trigger and action kind, through the API (npx pitcrew rules --help)
  executions list|show|cancel       what ran where, its output, and stopping it (npx pitcrew executions --help)
  runbooks list|show|create|update|versions|diff|delete|library|install
                                   the runbook store: every save a version, diffs between them; the starter
                                   library to install from (npx pitcrew runbooks --help)
  repositories list|show|create|test|files|delete
                                   git repositories runbooks are read from, read-only (npx pitcrew repositories --help)
  schedules list|next|pause|resume  cron rules and their ticks, through the API (npx pitcrew schedules --help)
  credentials list|create|test|rotate|delete
                                   cloud credentials (sealed; secrets read from a file or stdin)
  escalation-contacts get|set       who hears escalations and receives email runbooks
  users list|invite|role|remove|reset
                                   the tenant's members and their roles (npx pitcrew users --help)
  tokens list|create|revoke         your personal access tokens (npx pitcrew tokens --help)

environment: PORT, PITCREW_TLS_PORT, HOST, PITCREW_DATA_DIR, DATABASE_URL, PITCREW_PUBLIC_URL, PITCREW_SECRET_KEY, PITCREW_LOG_LEVEL, PITCREW_LOG_FORMAT (docs/configuration.md)`;

async function main(argv: string[]): Promise<number> {
  const [command, ...rest] = argv;
  const apiCommand = command === undefined ? undefined : API_COMMANDS[command];
  if (apiCommand) {
    if (rest.includes('--help') || rest.includes('-h')) {
      console.log(apiCommand.usage);
      return 0;
    }
    return apiCommand.run(rest, loadClientConfig(), (line) => console.log(line));
  }
  switch (command) {
    case 'server': {
      parseArgs({ args: rest, options: {}, strict: true });
      // Loaded only here: the server brings every cloud SDK, which the other commands would wait
      // seconds for (bootstrap took 3.2 s, 345 MB, for one insert).
      const { runServer } = await import('./server.js');
      return runServer(loadConfig());
    }
    case 'migrate':
      parseArgs({ args: rest, options: {}, strict: true });
      return runMigrate(loadConfig());
    case 'backup': {
      const { values, positionals } = parseArgs({ args: rest, options: { json: { type: 'boolean' } }, allowPositionals: true, strict: true });
      const { runBackup } = await import('./backup.js');
      return runBackup(loadConfig(), onlyFile('backup', positionals), { json: values.json ?? false });
    }
    case 'restore': {
      const { values, positionals } = parseArgs({ args: rest, options: { 'secret-key-file': { type: 'string' } }, allowPositionals: true, strict: true });
      const { runRestore } = await import('./backup.js');
      return runRestore(loadConfig(), onlyFile('restore', positionals), { secretKeyFile: values['secret-key-file'] });
    }
    case 'secrets': {
      const { runSecrets, SECRETS_USAGE } = await import('./secrets.js');
      if (rest.includes('--help') || rest.includes('-h')) {
        console.log(SECRETS_USAGE);
        return 0;
      }
      return runSecrets(loadConfig(), rest);
    }
    case 'agent': {
      const { runAgent } = await import('../../agent/main.js');
      return runAgent(rest);
    }
    case 'bootstrap': {
      const { values } = parseArgs({ args: rest, options: { json: { type: 'boolean' }, tenant: { type: 'string' }, new: { type: 'boolean' } }, strict: true });
      return runBootstrap(loadConfig(), { json: values.json ?? false, tenant: values.tenant ?? 'default', again: values.new ?? false });
    }
    case undefined:
    case 'help':
    case '--help':
    case '-h':
      console.log(USAGE);
      return command === undefined ? 2 : 0;
    default:
      console.error(`pitcrew: unknown command "${command}"\n\n${USAGE}`);
      return 2;
  }
}

/** The one FILE a backup or restore names. */
function onlyFile(command: string, positionals: string[]): string {
  if (positionals.length !== 1) throw new CliError(`usage: pitcrew ${command} FILE (${positionals.length === 0 ? 'no file given' : 'one file only'})`, 2);
  return positionals[0]!;
}

main(process.argv.slice(2)).then(
  (code) => {
    process.exitCode = code;
  },
  (error: unknown) => {
    const usage = error instanceof ConfigError || ['ERR_PARSE_ARGS_UNKNOWN_OPTION', 'ERR_PARSE_ARGS_INVALID_OPTION_VALUE', 'ERR_PARSE_ARGS_UNEXPECTED_POSITIONAL'].includes((error as { code?: string }).code ?? '');
    const known = usage || error instanceof CliError;
    console.error(`pitcrew: ${known ? (error as Error).message : (error as Error).stack ?? String(error)}`);
    process.exitCode = error instanceof CliError ? error.exitCode : usage ? 2 : 1;
  },
);
