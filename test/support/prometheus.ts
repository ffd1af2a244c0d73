import { spawn, type ChildProcess } from 'node:child_process';
import fs from 'node:fs';
import os from 'node:os';

/** Debian's Prometheus (2.42) and Alertmanager (0.25), as CI installs them (apt-get install prometheus prometheus-alertmanager, .ci/run). */
export const PROMETHEUS = '/usr/bin/prometheus';
export const ALERTMANAGER = '/usr/bin/prometheus-alertmanager';

export interface ToolProcess {
  child: ChildProcess;
  output(): string;
  kill(): Promise<void>;
}

export function assertToolsInstalled(): void {
  for (const bin of [PROMETHEUS, ALERTMANAGER]) {
    if (!fs.existsSync(bin)) throw new Error(`${bin} is missing: apt-get install prometheus prometheus-alertmanager (as .ci/run does)`);
  }
}

/** A real tool as a child process, its output kept for a failing test's report. */
export function startTool(bin: string, args: string[]): ToolProcess {
  const child = spawn(bin, args, { stdio: ['ignore', 'pipe', 'pipe'], env: { PATH: process.env.PATH ?? '/usr/bin:/bin', HOME: os.tmpdir() } });
  let output = '';
  child.stdout!.on('data', (chunk) => (output += chunk));
  child.stderr!.on('data', (chunk) => (output += chunk));
  const exited = new Promise<void>((resolve) => child.once('exit', () => resolve()));
  child.once('error', (error) => (output += `\nspawn failed: ${error.message}`));
  return {
    child,
    output: () => output,
    kill: async () => {
      if (child.exitCode === null && child.signalCode === null) child.kill('SIGKILL');
      await exited;
    },
  };
}
