import { spawn, type ChildProcess } from 'node:child_process';
import fs from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { fileURLToPath } from 'node:url';
import { afterAll } from 'vitest';
import { waitFor } from './wait.js';

const root = path.resolve(path.dirname(fileURLToPath(import.meta.url)), '../..');
export const AGENT_BUNDLE = path.join(root, 'dist/pitcrew-agent.mjs');

export interface AgentOptions {
  server: string;
  apiKey: string;
  hostname: string;
  tags?: string[];
  fingerprint?: string;
  /** Extra flags; --allow-root is added unless `asRoot: false` (tests run as root). */
  args?: string[];
  asRoot?: boolean;
  stateDir?: string;
}

export interface AgentProcess {
  child: ChildProcess;
  stateDir: string;
  output(): string;
  /** SIGKILL: the agent dies without cleaning up, like a crash. */
  kill(): Promise<void>;
  stop(): Promise<void>;
  exited: Promise<number | null>;
}

// Every agent state directory of a test file, removed after the file (its suites stop their agents first).
let stateRoot: string | undefined;
afterAll(() => {
  if (stateRoot) fs.rmSync(stateRoot, { recursive: true, force: true });
  stateRoot = undefined;
});

function newStateDir(hostname: string): string {
  stateRoot ??= fs.mkdtempSync(path.join(os.tmpdir(), 'pitcrew-agents-'));
  return fs.mkdtempSync(path.join(stateRoot, `${hostname}-`));
}

/** Starts the bundled agent (npm test builds it), the way an operator would run it on a host. */
export function spawnAgent(options: AgentOptions): AgentProcess {
  const stateDir = options.stateDir ?? newStateDir(options.hostname);
  const args = [
    AGENT_BUNDLE,
    '--server', options.server,
    '--api-key', options.apiKey,
    '--hostname', options.hostname,
    '--state-dir', stateDir,
    '--heartbeat-seconds', '1',
  ];
  if (options.tags?.length) args.push('--tags', options.tags.join(','));
  if (options.fingerprint) args.push('--server-fingerprint', options.fingerprint);
  if (options.asRoot !== false) args.push('--allow-root');
  args.push(...(options.args ?? []));
  const child = spawn(process.execPath, args, { stdio: ['ignore', 'pipe', 'pipe'], env: { PATH: process.env.PATH ?? '/usr/bin:/bin', HOME: os.tmpdir() } });
  let output = '';
  child.stdout!.on('data', (chunk) => (output += chunk));
  child.stderr!.on('data', (chunk) => (output += chunk));
  const exited = new Promise<number | null>((resolve) => child.once('exit', (code) => resolve(code)));
  const signal = (name: NodeJS.Signals) => async () => {
    if (child.exitCode === null && child.signalCode === null) child.kill(name);
    await exited;
  };
  return { child, stateDir, output: () => output, kill: signal('SIGKILL'), stop: signal('SIGTERM'), exited };
}

interface Api {
  (method: 'GET', url: string): Promise<{ statusCode: number; json(): unknown }>;
}

/** Waits until the host shows online through the API (its agent said hello). */
export async function waitOnline(api: Api, hostname: string, timeoutMs = 20_000): Promise<{ id: string }> {
  return waitFor(async () => {
    const response = await api('GET', `/api/v1/hosts?hostname=${encodeURIComponent(hostname)}`);
    const host = (response.json() as { items: Array<{ id: string; status: string }> }).items[0];
    return host?.status === 'online' ? host : undefined;
  }, `host ${hostname} online`, timeoutMs);
}
