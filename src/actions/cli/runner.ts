import { spawn } from 'node:child_process';
import { chownSync, mkdirSync, mkdtempSync, writeFileSync } from 'node:fs';
import { rm } from 'node:fs/promises';
import { dirname, join } from 'node:path';
import type { Kysely } from 'kysely';
import type { ExecutionResult } from '../../executions/result.js';
import { openCredential } from '../../credentials/repository.js';
import type { Provider, Secret } from '../../credentials/schema.js';
import { CappedOutput } from '../../executions/capped-output.js';
import { resolveInterpreter, type Program } from '../../executions/interpreters.js';
import type { Admission, OutputSink, RunEnd, ServiceRunner } from '../../executions/service-executor.js';
import type { SecretBox } from '../../identity/secret-box.js';
import type { Database, ExecutionRow } from '../../store/schema.js';
import { cliEnvironment, type CliCredential, type CliEnvironmentSettings, type HomeFile } from './environment.js';
import { scriptMismatch } from '../runbook-record.js';
import { isCliSpec, type CliSpec } from './kind.js';
import { SecretMask } from './mask.js';

/** How the CLI Machine runs runbooks (docs/cli-machine.md; PITCREW_CLI_* settings). */
export interface CliSettings extends CliEnvironmentSettings {
  /** Where each run's throwaway HOME is made: never inside the data directory. */
  scratchDir: string;
  maxOutputBytes: number;
  /** Runs of one tenant at once on this node; the others wait, queued. */
  maxPerTenant: number;
  /** The user runs switch to (the service runs as root): their own user, away from the data directory. */
  runAs: { uid: number; gid: number } | undefined;
}

/** STS's shortest session, and the longest a role gives unless its MaxSessionDuration says more. */
const ROLE_SESSION_MIN_SECONDS = 900;
const ROLE_SESSION_MAX_SECONDS = 3600;

/** Between SIGTERM and SIGKILL when a run is stopped. */
const KILL_GRACE_MS = 5000;

type Spawned = { exitCode: number | null; signal: string | null; startedAt: number } | { error: string };

/**
 * Runs CLI runbooks as child processes of the service (target cli_machine): a throwaway HOME, a
 * clean environment holding only the rule's credentials as each CLI expects them, a timeout (the
 * service executor's signal), output limits with every credential value masked, live output like
 * an agent's, and at most `maxPerTenant` runs of a tenant at once on a node.
 */
export class CliRunner implements Extract<ServiceRunner, { mode: 'in_process' }> {
  readonly kind = 'cli';
  readonly mode = 'in_process';
  private readonly runningByTenant = new Map<string, number>();

  constructor(
    private readonly db: Kysely<Database>,
    private readonly box: SecretBox,
    private readonly settings: CliSettings,
  ) {}

  admit(execution: ExecutionRow): Admission {
    const running = this.runningByTenant.get(execution.tenant_id) ?? 0;
    if (running >= this.settings.maxPerTenant) return undefined;
    this.runningByTenant.set(execution.tenant_id, running + 1);
    let released = false;
    return () => {
      if (released) return;
      released = true;
      const left = (this.runningByTenant.get(execution.tenant_id) ?? 1) - 1;
      if (left > 0) this.runningByTenant.set(execution.tenant_id, left);
      else this.runningByTenant.delete(execution.tenant_id);
    };
  }

  async run(execution: ExecutionRow, signal: AbortSignal, output: OutputSink): Promise<RunEnd> {
    const spec = JSON.parse(execution.spec) as unknown;
    if (!isCliSpec(spec)) return { state: 'failed', reason: 'not a CLI execution' };
    const mismatch = scriptMismatch(spec);
    if (mismatch) return { state: 'failed', reason: mismatch };
    const credentials = await this.credentials(spec, execution.tenant_id, signal);
    if (typeof credentials === 'string') return { state: 'failed', reason: credentials };
    const program = resolveInterpreter(spec.interpreter, this.settings.path);
    if ('missing' in program) return { state: 'failed', reason: `the CLI Machine cannot run it: ${program.missing}` };
    const home = mkdtempSync(join(this.settings.scratchDir, 'pitcrew-cli-'));
    try {
      const environment = cliEnvironment(home, this.settings, spec.env, spec.context, credentials);
      const scriptPath = this.prepareHome(home, program, spec.script!, environment.files);
      const mask = new SecretMask(environment.secrets);
      const run = new CliProcess(execution.id, this.settings, mask, output);
      const spawned = await run.spawn(program, scriptPath, join(home, 'work'), environment.env, signal);
      return { result: run.result(spawned), skippedEnv: environment.skipped };
    } finally {
      await rm(home, { recursive: true, force: true }).catch(() => undefined);
    }
  }

  /**
   * The credentials the rule names, read in the execution's own tenant, an AWS role assumed for the
   * run (environment.ts says why the CLI is not left to); a reason when one is gone or refused.
   */
  private async credentials(spec: CliSpec, tenantId: string, signal: AbortSignal): Promise<CliCredential[] | string> {
    if (spec.credentialIds.length === 0) return [];
    const rows = await this.db.selectFrom('credentials').selectAll().where('id', 'in', spec.credentialIds).where('tenant_id', '=', tenantId).execute();
    const missing = spec.credentialIds.filter((id) => !rows.some((row) => row.id === id));
    if (missing.length > 0) return `the rule's credential ${missing.join(', ')} does not exist in this tenant (deleted since?): set action.credentialIds to credentials of GET /api/v1/credentials; nothing was run`;
    const credentials: CliCredential[] = rows.map((row) => ({ name: row.name, provider: row.provider as Provider, secret: openCredential(this.box, row) }));
    for (const credential of credentials) {
      const secret = credential.secret as Secret<'aws'>;
      if (credential.provider !== 'aws' || !secret.roleArn) continue;
      try {
        credential.assumed = await this.assumeRole(secret, spec.timeoutSeconds, signal);
      } catch (error) {
        if (signal.aborted) throw error;
        return `${error instanceof Error ? error.message : String(error)}; nothing was run`;
      }
    }
    return credentials;
  }

  /** For as long as the run may last (STS takes 15 min to 1 h without a longer MaxSessionDuration on the role). */
  private async assumeRole(secret: Secret<'aws'>, timeoutSeconds: number, signal: AbortSignal): Promise<CliCredential['assumed']> {
    const { assumeRoleForRun } = await import('../cloud/aws.js');
    const durationSeconds = Math.min(ROLE_SESSION_MAX_SECONDS, Math.max(ROLE_SESSION_MIN_SECONDS, timeoutSeconds + 60));
    return assumeRoleForRun(secret, this.settings.awsStsEndpoint, { sessionName: 'pitcrew-cli', durationSeconds, signal });
  }

  /** HOME with its work and tmp directories, the credential files and the script, owned by the run's user. */
  private prepareHome(home: string, program: Program, script: string, files: HomeFile[]): string {
    const made = [home, join(home, 'work'), join(home, 'tmp')];
    for (const dir of made.slice(1)) mkdirSync(dir, { mode: 0o700 });
    const scriptPath = join(home, `runbook${program.extension}`);
    const written = [scriptPath];
    writeFileSync(scriptPath, script, { mode: 0o700 });
    for (const file of files) {
      const path = join(home, file.path);
      for (let dir = dirname(path); dir !== home && !made.includes(dir); dir = dirname(dir)) made.push(dir);
      mkdirSync(dirname(path), { recursive: true, mode: 0o700 });
      writeFileSync(path, file.content, { mode: file.executable ? 0o700 : 0o600 });
      written.push(path);
    }
    const user = this.settings.runAs;
    if (user) for (const path of [...made, ...written]) chownSync(path, user.uid, user.gid);
    return scriptPath;
  }
}

/** One child process: its capped, masked output and how it ended. */
class CliProcess {
  private readonly stdout: CappedOutput;
  private readonly stderr: CappedOutput;
  private stopped = false;

  constructor(
    private readonly executionId: string,
    private readonly settings: CliSettings,
    private readonly mask: SecretMask,
    private readonly output: OutputSink,
  ) {
    this.stdout = new CappedOutput(settings.maxOutputBytes);
    this.stderr = new CappedOutput(settings.maxOutputBytes);
  }

  spawn(program: Program, scriptPath: string, cwd: string, env: Record<string, string>, signal: AbortSignal): Promise<Spawned> {
    return new Promise((resolve) => {
      const user = this.settings.runAs;
      // detached: the runbook leads its own process group, so a stop reaches everything it started.
      const child = spawn(program.path, [...program.args, scriptPath], { cwd, env, detached: true, stdio: ['ignore', 'pipe', 'pipe'], ...(user ? { uid: user.uid, gid: user.gid } : {}) });
      let startedAt = 0;
      let open = 2;
      let exit: Spawned | undefined;
      let settled = false;
      const masks = { stdout: this.mask.fork(), stderr: this.mask.fork() };
      const stop = () => {
        if (child.pid === undefined || this.stopped) return;
        this.stopped = true;
        killGroup(child.pid, 'SIGTERM');
        setTimeout(() => killGroup(child.pid!, 'SIGKILL'), KILL_GRACE_MS).unref();
      };
      const finish = () => {
        if (settled) return;
        settled = true;
        signal.removeEventListener('abort', stop);
        for (const stream of ['stdout', 'stderr'] as const) {
          const rest = masks[stream].end();
          if (rest) this.output(stream, rest);
        }
        // Nothing a runbook started outlives it: its group holds the tenant's credentials.
        if (child.pid !== undefined) killGroup(child.pid, 'SIGKILL');
        resolve(exit!);
      };
      child.once('error', (error) => {
        if (child.pid !== undefined) return;
        exit = { error: `${program.path} could not be started: ${error.message}` };
        open = 0;
        finish();
      });
      child.once('spawn', () => {
        startedAt = Date.now();
        signal.addEventListener('abort', stop, { once: true });
        if (signal.aborted) stop();
      });
      for (const [stream, capped] of [['stdout', this.stdout], ['stderr', this.stderr]] as const) {
        child[stream].on('data', (chunk: Buffer) => {
          const text = masks[stream].push(capped.push(chunk));
          if (text) this.output(stream, text);
        });
        child[stream].once('close', () => {
          if (--open === 0 && exit) finish();
        });
      }
      child.once('exit', (exitCode, exitSignal) => {
        exit = { exitCode, signal: exitSignal, startedAt };
        if (open === 0) return finish();
        // A process the runbook left in the background holds its output: it is stopped with the group.
        setTimeout(() => {
          child.stdout.destroy();
          child.stderr.destroy();
          finish();
        }, 1000).unref();
      });
    });
  }

  result(spawned: Spawned): ExecutionResult {
    const base = {
      executionId: this.executionId,
      finishedAt: Date.now(),
      stdout: this.mask.text(this.stdout.text()),
      stderr: this.mask.text(this.stderr.text()),
      stdoutTruncated: this.stdout.truncated,
      stderrTruncated: this.stderr.truncated,
      artifacts: [],
      artifactsTruncated: false,
    };
    if ('error' in spawned) return { ...base, ending: 'failed_to_start', exitCode: null, signal: null, reason: spawned.error, startedAt: null };
    // A run that was stopped is ended by the service executor, which knows why (timeout, cancel, shutdown).
    return { ...base, ending: 'exited', exitCode: spawned.exitCode, signal: spawned.signal, reason: null, startedAt: spawned.startedAt };
  }
}

function killGroup(pgid: number, signal: NodeJS.Signals): void {
  try {
    process.kill(-pgid, signal);
  } catch {
    // gone already
  }
}
