import { spawn } from 'node:child_process';

/** What one git process ended with. */
export interface GitRun {
  code: number | null;
  stdout: Buffer;
  stderr: string;
  /** Killed at the deadline. */
  timedOut: boolean;
  /** Killed because stdout passed maxStdoutBytes: stdout holds its first bytes. */
  cut: boolean;
}

export interface GitRunOptions {
  env: Record<string, string>;
  cwd?: string | undefined;
  /** When (epoch ms) the process group is killed. */
  deadline: number;
  maxStdoutBytes?: number;
}

/** Kept of stderr: git's messages are short; a server's progress chatter is not kept whole. */
const MAX_STDERR_BYTES = 64 * 1024;

/**
 * Runs `git args…` with exactly `env` (nothing of the service's own environment), in a process
 * group of its own so that the deadline kills git and whatever it started (ssh, the remote
 * helper). Rejects only when git cannot be started (ENOENT when it is not installed).
 */
export function runGit(args: string[], options: GitRunOptions): Promise<GitRun> {
  return new Promise((resolve, reject) => {
    const child = spawn('git', args, { env: options.env, cwd: options.cwd, detached: true, stdio: ['ignore', 'pipe', 'pipe'] });
    const out: Buffer[] = [];
    let outBytes = 0;
    let err = '';
    let timedOut = false;
    let cut = false;
    const kill = () => {
      try {
        process.kill(-child.pid!, 'SIGKILL');
      } catch {
        // Already gone.
      }
    };
    const timer = setTimeout(() => {
      timedOut = true;
      kill();
    }, Math.max(0, options.deadline - Date.now()));
    child.stdout.on('data', (chunk: Buffer) => {
      if (cut) return;
      out.push(chunk);
      outBytes += chunk.length;
      if (options.maxStdoutBytes !== undefined && outBytes > options.maxStdoutBytes) {
        cut = true;
        kill();
      }
    });
    child.stderr.on('data', (chunk: Buffer) => {
      if (err.length < MAX_STDERR_BYTES) err += chunk.toString('utf8');
    });
    child.once('error', (error) => {
      clearTimeout(timer);
      reject(error);
    });
    child.once('close', (code) => {
      clearTimeout(timer);
      resolve({ code, stdout: Buffer.concat(out), stderr: err, timedOut, cut });
    });
  });
}
