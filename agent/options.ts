import { readFileSync } from 'node:fs';
import { hostname as osHostname } from 'node:os';
import { join } from 'node:path';
import { parseArgs } from 'node:util';
import { SCRIPT_PATH } from './environment.js';
import { isLoopbackHost, normaliseFingerprint, type Trust } from './tls.js';

export interface AgentOptions {
  server: URL;
  /** Needed only to enrol (first start, or after the service dropped this agent's credential). */
  apiKey: string | undefined;
  hostname: string;
  /** Take over an existing host of this name at this start's enrolment (a reinstalled machine). */
  replace: boolean;
  tags: string[];
  /** --cloud-instance-id; undefined: read from the firmware (agent/cloud-instance.ts). */
  cloudInstanceId: string | undefined;
  trust: Trust;
  runAs: string | undefined;
  group: string | undefined;
  allowRoot: boolean;
  allow: string[];
  stateDir: string;
  workDir: string;
  maxOutputBytes: number;
  maxArtifactBytes: number;
  /** The PATH scripts get (--script-path). */
  scriptPath: string;
  /** Overrides the interval the service asks for in its welcome. */
  heartbeatSeconds: number | undefined;
}

/** What the agent reads from its environment (read once, in main). */
export interface AgentEnvironment {
  PITCREW_API_KEY?: string;
  PITCREW_AGENT_STATE_DIR?: string;
  HOME?: string;
}

export type CommandLine = { kind: 'run'; options: AgentOptions } | { kind: 'help' } | { kind: 'version' } | { kind: 'error'; message: string };

export const USAGE = `Usage: pitcrew-agent --server https://HOST:PORT --api-key KEY [options]
       (also: pitcrew agent ...)

Connects out to the pitcrew service over TLS, enrols with a tenant API key, then runs the
scripts the service sends to this host.

Connection
  --server URL                the service's HTTPS address, e.g. https://pitcrew.example.com:8443
  --api-key KEY               a tenant API key with the enrol scope, used only to enrol (or set
                              PITCREW_API_KEY, which keeps it out of the process list); not needed
                              once enrolled
  --ca-file PEM               trust the service certificate issued by this CA
  --server-fingerprint SHA256 pin the service's certificate by its SHA-256 fingerprint (hex, colons
                              optional), as the service prints it at start
                              (neither: the system's trusted CAs)
  --insecure                  allow an http:// server, only on loopback (127.0.0.1, ::1, localhost)
  --heartbeat-seconds N       heartbeat interval (default: what the service asks for)

This host
  --hostname NAME             the name the service knows this host by (default: ${osHostname()})
  --replace                   this machine replaces the enrolled host of that name (a reinstall):
                              the previous agent's credential stops working; recorded on the host
  --tags a,b                  tags for rules that target hosts by tag (repeatable)
  --cloud-instance-id ID      this machine's instance id at its cloud, for cloud actions (default: read
                              from the firmware on EC2, and on OpenStack as root)

Safety
  --run-as USER               start as root, then drop to USER for everything (scripts included)
  --group GROUP               run with this group (with --run-as, or as root with --allow-root)
  --allow-root                run as root (not recommended; scripts run as root too)
  --allow PATTERN             allow only commands matching one of these patterns (repeatable;
                              * matches anything): --allow 'systemctl restart *' --allow 'df *'

Files and limits
  --state-dir DIR             credentials and journal (default: $PITCREW_AGENT_STATE_DIR, else
                              /var/lib/pitcrew-agent as root, else ~/.local/state/pitcrew-agent)
  --work-dir DIR              where scripts run, a clean directory each (default: STATE/work)
  --max-output BYTES          output kept per stream per run (default 1048576)
  --max-artifacts BYTES       diagnostics files kept per run, in total (default 5242880)
  --script-path DIRS          the PATH scripts get, absolute directories separated by : (default
                              /usr/local/sbin:/usr/local/bin:/usr/sbin:/usr/bin:/sbin:/bin; add
                              e.g. /opt/java/bin for a JDK's jcmd)

  --help, --version

See docs/agent.md.`;

const DEFAULT_MAX_OUTPUT = 1024 * 1024;
const DEFAULT_MAX_ARTIFACTS = 5 * 1024 * 1024;
// The service's enrolment schema (src/agents/routes.ts): checked here so a typo fails at once.
const HOSTNAME = /^[A-Za-z0-9_.:-]{1,253}$/;
const TAG = /^[A-Za-z0-9_.:/=-]{1,128}$/;
const CLOUD_INSTANCE = /^[A-Za-z0-9_./:-]{1,200}$/;

class UsageError extends Error {}

export function parseCommandLine(argv: string[], env: AgentEnvironment, isRoot: boolean): CommandLine {
  try {
    return parse(argv, env, isRoot);
  } catch (error) {
    if (error instanceof UsageError || (error as { code?: string }).code?.startsWith('ERR_PARSE_ARGS')) {
      return { kind: 'error', message: (error as Error).message };
    }
    throw error;
  }
}

function parse(argv: string[], env: AgentEnvironment, isRoot: boolean): CommandLine {
  const { values, positionals } = parseArgs({
    args: argv,
    strict: true,
    allowPositionals: true,
    options: {
      server: { type: 'string' },
      'api-key': { type: 'string' },
      hostname: { type: 'string' },
      replace: { type: 'boolean' },
      tags: { type: 'string', multiple: true },
      'cloud-instance-id': { type: 'string' },
      'ca-file': { type: 'string' },
      'server-fingerprint': { type: 'string' },
      'run-as': { type: 'string' },
      group: { type: 'string' },
      'allow-root': { type: 'boolean' },
      allow: { type: 'string', multiple: true },
      insecure: { type: 'boolean' },
      'state-dir': { type: 'string' },
      'work-dir': { type: 'string' },
      'max-output': { type: 'string' },
      'max-artifacts': { type: 'string' },
      'script-path': { type: 'string' },
      'heartbeat-seconds': { type: 'string' },
      help: { type: 'boolean', short: 'h' },
      version: { type: 'boolean' },
    },
  });
  if (values.help) return { kind: 'help' };
  if (values.version) return { kind: 'version' };
  // `pitcrew agent …` may pass its sub-command through.
  const extra = positionals[0] === 'agent' ? positionals.slice(1) : positionals;
  if (extra.length > 0) throw new UsageError(`unexpected argument ${JSON.stringify(extra[0])}: every setting is a --flag`);

  if (!values.server) throw new UsageError('--server is required: the service address, e.g. --server https://pitcrew.example.com:8443');
  const server = parseServer(values.server, values.insecure === true);
  if (values['ca-file'] && values['server-fingerprint']) throw new UsageError('give either --ca-file or --server-fingerprint, not both');
  const trust = parseTrust(server, values['ca-file'], values['server-fingerprint']);
  const hostname = values.hostname ?? osHostname();
  if (!HOSTNAME.test(hostname)) throw new UsageError(`--hostname ${JSON.stringify(hostname)} is not a valid host name (letters, digits, _ . : -)`);
  const tags = (values.tags ?? []).flatMap((t) => t.split(',')).map((t) => t.trim()).filter(Boolean);
  const badTag = tags.find((t) => !TAG.test(t));
  if (badTag !== undefined) throw new UsageError(`tag ${JSON.stringify(badTag)} is not valid (letters, digits, _ . : / = -, at most 128)`);
  if (tags.length > 50) throw new UsageError(`${tags.length} tags given; at most 50`);
  const cloudInstanceId = values['cloud-instance-id'];
  if (cloudInstanceId !== undefined && !CLOUD_INSTANCE.test(cloudInstanceId)) throw new UsageError(`--cloud-instance-id ${JSON.stringify(cloudInstanceId)} is not an instance id (letters, digits, _ . / : -, at most 200), e.g. i-0123456789abcdef0`);
  const allow = (values.allow ?? []).map((p) => p.trim());
  if (allow.some((p) => p === '')) throw new UsageError('--allow needs a pattern, e.g. --allow "systemctl restart *"');
  if (values['run-as'] !== undefined && values['run-as'] === '') throw new UsageError('--run-as needs a user name');

  const stateDir = values['state-dir'] ?? env.PITCREW_AGENT_STATE_DIR ?? defaultStateDir(isRoot, env.HOME);
  return {
    kind: 'run',
    options: {
      server,
      apiKey: values['api-key'] ?? (env.PITCREW_API_KEY || undefined),
      hostname,
      replace: values.replace === true,
      tags,
      cloudInstanceId,
      trust,
      runAs: values['run-as'],
      group: values.group,
      allowRoot: values['allow-root'] === true,
      allow,
      stateDir,
      workDir: values['work-dir'] ?? join(stateDir, 'work'),
      maxOutputBytes: positiveInteger('--max-output', values['max-output'], DEFAULT_MAX_OUTPUT),
      maxArtifactBytes: positiveInteger('--max-artifacts', values['max-artifacts'], DEFAULT_MAX_ARTIFACTS),
      scriptPath: values['script-path'] === undefined ? SCRIPT_PATH : parseScriptPath(values['script-path']),
      heartbeatSeconds: values['heartbeat-seconds'] === undefined ? undefined : positiveInteger('--heartbeat-seconds', values['heartbeat-seconds'], 0, 3600),
    },
  };
}

/**
 * Only absolute directories: an empty entry or a relative one is the script's working directory to
 * the shell, where a file the script itself wrote would run in place of a command the allowlist approved.
 */
function parseScriptPath(text: string): string {
  const dirs = text.split(':');
  const bad = dirs.find((dir) => !dir.startsWith('/'));
  if (bad !== undefined) throw new UsageError(`--script-path ${JSON.stringify(text)}: ${bad === '' ? 'an empty entry' : JSON.stringify(bad)} is not an absolute directory; list absolute directories separated by :, e.g. /opt/java/bin:/usr/bin:/bin`);
  return text;
}

function parseServer(text: string, insecure: boolean): URL {
  let server: URL;
  try {
    server = new URL(text);
  } catch {
    throw new UsageError(`--server ${JSON.stringify(text)} is not a URL; give the service address, e.g. https://pitcrew.example.com:8443`);
  }
  if (server.search || server.hash || server.username || server.password) throw new UsageError('--server takes a plain address: no query, fragment or user name');
  if (server.protocol === 'https:') return server;
  if (server.protocol !== 'http:') throw new UsageError(`--server must start with https:// (got ${server.protocol}//)`);
  if (!insecure || !isLoopbackHost(server)) {
    throw new UsageError('the agent connects over TLS only: use the service\'s https:// address (its PITCREW_TLS_PORT, 8443 by default); '
      + 'plain http:// is accepted only with --insecure and a server on this machine (127.0.0.1, ::1, localhost)');
  }
  return server;
}

function parseTrust(server: URL, caFile: string | undefined, fingerprint: string | undefined): Trust {
  if (server.protocol === 'http:') {
    if (caFile || fingerprint) throw new UsageError('--ca-file and --server-fingerprint need an https:// --server');
    return { kind: 'plain' };
  }
  if (fingerprint !== undefined) {
    const normalised = normaliseFingerprint(fingerprint);
    if (!normalised) throw new UsageError('--server-fingerprint must be a SHA-256 fingerprint: 64 hex digits, colons optional, as the service prints it at start');
    return { kind: 'pin', fingerprint: normalised };
  }
  if (caFile !== undefined) {
    let pem: string;
    try {
      pem = readFileSync(caFile, 'utf8');
    } catch (error) {
      throw new UsageError(`--ca-file ${caFile} cannot be read: ${(error as Error).message}`);
    }
    if (!pem.includes('-----BEGIN CERTIFICATE-----')) throw new UsageError(`--ca-file ${caFile} holds no PEM certificate (-----BEGIN CERTIFICATE-----)`);
    return { kind: 'ca', pem };
  }
  return { kind: 'system' };
}

function positiveInteger(flag: string, text: string | undefined, fallback: number, max = Number.MAX_SAFE_INTEGER): number {
  if (text === undefined) return fallback;
  const value = /^[0-9]+$/.test(text) ? Number(text) : NaN;
  if (!Number.isSafeInteger(value) || value < 1 || value > max) throw new UsageError(`${flag} must be a whole number from 1 to ${max}, got ${JSON.stringify(text)}`);
  return value;
}

function defaultStateDir(isRoot: boolean, home: string | undefined): string {
  if (isRoot) return '/var/lib/pitcrew-agent';
  if (!home) throw new UsageError('HOME is not set: give --state-dir DIR (or PITCREW_AGENT_STATE_DIR)');
  return join(home, '.local', 'state', 'pitcrew-agent');
}

/**
 * The process's command line with the value of --api-key replaced, for `ps` and /proc/PID/cmdline
 * (readable by every user of the host); undefined when no key was given there.
 */
export function maskedCommandLine(argv: readonly string[]): string | undefined {
  let masked = false;
  const shown = argv.map((arg, i) => {
    if (argv[i - 1] === '--api-key' || arg.startsWith('--api-key=')) {
      masked = true;
      return arg.startsWith('--api-key=') ? '--api-key=[REDACTED]' : '[REDACTED]';
    }
    return arg;
  });
  return masked ? shown.join(' ') : undefined;
}
