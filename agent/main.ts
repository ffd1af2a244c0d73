import { arch, release, type } from 'node:os';
import { join } from 'node:path';
import { takeAccount, SetupError, type Account } from './account.js';
import { detectCloudInstance } from './cloud-instance.js';
import { Connection } from './connection.js';
import { CredentialStore } from './credentials.js';
import { baseEnvironment, type RunUser } from './environment.js';
import { Executor } from './executor.js';
import { rootRefusal } from './identity.js';
import { Journal } from './journal.js';
import { DirectLauncher } from './launcher.js';
import { createLogger } from './log.js';
import { RunDirs } from './run-dirs.js';
import { HelperLauncher } from './spawn-helper.js';
import { maskedCommandLine, parseCommandLine, USAGE, type AgentEnvironment, type AgentOptions } from './options.js';
import { AGENT_VERSION } from './version.js';

const KILL_GRACE_MS = 5_000;
const DRAIN_MS = 2_000;
const PURGE_EVERY_MS = 60 * 60 * 1000;

/** The agent program (pitcrew-agent, pitcrew agent): returns the process exit code. */
export async function runAgent(argv: string[]): Promise<number> {
  const uid = process.getuid?.() ?? -1;
  const parsed = parseCommandLine(argv, readEnvironment(), uid === 0);
  switch (parsed.kind) {
    case 'help':
      process.stdout.write(`${USAGE}\n`);
      return 0;
    case 'version':
      process.stdout.write(`pitcrew-agent ${AGENT_VERSION}\n`);
      return 0;
    case 'error':
      process.stderr.write(`pitcrew-agent: ${parsed.message}\nRun pitcrew-agent --help for every flag.\n`);
      return 2;
  }
  const options = parsed.options;
  // The key stays readable in `ps` until here; PITCREW_API_KEY never is (docs/agent.md).
  const shownCommandLine = maskedCommandLine(process.argv);
  if (shownCommandLine) process.title = shownCommandLine;
  const refusal = rootRefusal(uid, options.runAs, options.allowRoot);
  if (refusal) {
    process.stderr.write(`${refusal}\n`);
    return 1;
  }
  let account: Account;
  try {
    account = await takeAccount(options, uid);
  } catch (error) {
    if (!(error instanceof SetupError)) throw error;
    process.stderr.write(`pitcrew-agent: ${error.message}\n`);
    return error.exitCode;
  }
  const unlock = () => account.lock.release();
  // An exit that skips the finally below (process.exit, an uncaught error) unlocks too; a crash
  // leaves a lock naming a dead process, which the next agent breaks.
  process.once('exit', unlock);
  try {
    return await serve(options, account.user, shownCommandLine !== undefined);
  } finally {
    unlock();
    process.off('exit', unlock);
  }
}

async function serve(options: AgentOptions, runUser: RunUser, keyOnCommandLine: boolean): Promise<number> {
  const log = createLogger();
  const cloudInstanceId = options.cloudInstanceId ?? detectCloudInstance();
  const host = { hostname: options.hostname, tags: options.tags, os: `${type()} ${release()}`.slice(0, 200), arch: arch(), version: AGENT_VERSION, ...(cloudInstanceId ? { cloudInstanceId } : {}) };
  log.info('pitcrew-agent starting', {
    version: AGENT_VERSION, user: runUser.name, uid: process.getuid!(), gid: process.getgid!(), server: options.server.origin,
    hostname: host.hostname, tags: host.tags, cloudInstanceId, stateDir: options.stateDir, allowPatterns: options.allow.length,
  });
  if (keyOnCommandLine) log.warn('the API key was given with --api-key, where every user of this host can read it in ps until the agent hid it; set PITCREW_API_KEY instead');
  const journal = await Journal.open(join(options.stateDir, 'journal'));
  for (const { executionId, reason } of journal.interruptions()) log.warn('found a run the previous agent process left; it is reported, never re-run', { executionId, reason });
  const launcher = new HelperLauncher(new DirectLauncher(), log);
  launcher.start();
  const executor = new Executor({
    journal,
    allow: options.allow,
    log,
    runner: {
      launcher,
      runDirs: new RunDirs(options.workDir),
      maxOutputBytes: options.maxOutputBytes,
      maxArtifactBytes: options.maxArtifactBytes,
      baseEnv: baseEnvironment(runUser, options.scriptPath),
      killGraceMs: KILL_GRACE_MS,
      drainMs: DRAIN_MS,
    },
  });
  const connection = new Connection({
    server: options.server,
    trust: options.trust,
    apiKey: options.apiKey,
    host,
    replace: options.replace,
    credentials: new CredentialStore(options.stateDir),
    executor,
    log,
    heartbeatSeconds: options.heartbeatSeconds,
  });

  const purge = setInterval(() => void journal.purge().catch(() => undefined), PURGE_EVERY_MS).unref();
  const onSignal = (signal: NodeJS.Signals) => {
    log.info('stopping', { signal });
    // Running scripts are stopped and their results journaled (and sent, if connected) before the link closes.
    void executor.stopAll(`the agent was stopped (${signal}) while the script ran`).finally(() => connection.stop());
  };
  process.once('SIGTERM', onSignal);
  process.once('SIGINT', onSignal);
  try {
    const code = await connection.run();
    await executor.stopAll('the agent stopped while the script ran');
    return code;
  } finally {
    clearInterval(purge);
    process.off('SIGTERM', onSignal);
    process.off('SIGINT', onSignal);
  }
}

function readEnvironment(): AgentEnvironment {
  // The agent's one read of its environment; the options module validates it with the flags.
  // eslint-disable-next-line no-restricted-syntax
  const { PITCREW_API_KEY, PITCREW_AGENT_STATE_DIR, HOME } = process.env;
  return { PITCREW_API_KEY, PITCREW_AGENT_STATE_DIR, HOME };
}
