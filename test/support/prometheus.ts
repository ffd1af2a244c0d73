import { spawn, type ChildProcess } from 'node:child_process';
import fs from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { freePort } from './process.js';

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

/**
 * A tool serving HTTP on a port of its own (Prometheus, Alertmanager), ready once it answers
 * `/-/ready`. The port is found free first, and a test running beside this one can take it before
 * the tool binds it: a tool that exits before it is ready is started again on another port, up to
 * three times. Fails with the tool's output when it does not get ready.
 */
export async function startServing(bin: string, args: (port: number) => string[], timeoutMs = 60_000): Promise<{ tool: ToolProcess; url: string }> {
  const exits: string[] = [];
  for (let attempt = 1; attempt <= 3; attempt++) {
    const port = await freePort();
    const url = `http://127.0.0.1:${port}`;
    const tool = startTool(bin, args(port));
    const deadline = Date.now() + timeoutMs;
    while (tool.child.exitCode === null && tool.child.signalCode === null) {
      if (await fetch(`${url}/-/ready`).then((response) => response.ok, () => false)) return { tool, url };
      if (Date.now() > deadline) {
        await tool.kill();
        throw new Error(`${bin} was not ready at ${url} after ${timeoutMs} ms; its output:\n${tool.output()}`);
      }
      await new Promise((resolve) => setTimeout(resolve, 50));
    }
    exits.push(`on port ${port}: ${tool.output().trim().split('\n').slice(-3).join('\n')}`);
  }
  throw new Error(`${bin} exited before it was ready, three times:\n${exits.join('\n')}`);
}

export interface AlertmanagerRoute {
  /** The labels a notification groups by; none: one group for all alerts. */
  groupBy?: string[];
  repeatInterval: string;
  /** More command-line flags (e.g. `--log.level=debug`). */
  flags?: string[];
}

/**
 * Debian's Alertmanager posting its own webhook body to one pitcrew URL, each group flushed within
 * a second, its configuration and data in `work`: serving once it answers (startServing).
 */
export async function startAlertmanager(work: string, webhookUrl: string, route: AlertmanagerRoute, timeoutMs?: number): Promise<{ tool: ToolProcess; url: string }> {
  fs.writeFileSync(path.join(work, 'alertmanager.yml'), `route:
  receiver: pitcrew${route.groupBy ? `\n  group_by: ${JSON.stringify(route.groupBy)}` : ''}
  group_wait: 1s
  group_interval: 1s
  repeat_interval: ${route.repeatInterval}
receivers:
  - name: pitcrew
    webhook_configs:
      - url: ${JSON.stringify(webhookUrl)}
        send_resolved: true
`);
  return startServing(ALERTMANAGER, (port) => [
    `--config.file=${path.join(work, 'alertmanager.yml')}`, `--storage.path=${path.join(work, 'alertmanager-data')}`,
    `--web.listen-address=127.0.0.1:${port}`, '--cluster.listen-address=', ...(route.flags ?? []),
  ], timeoutMs);
}

/** The part of prometheus.yml that sends its alerts to the Alertmanager at `url`. */
export const alertingTo = (url: string) => `alerting:
  alertmanagers:
    - static_configs:
        - targets: [${JSON.stringify(new URL(url).host)}]
`;
