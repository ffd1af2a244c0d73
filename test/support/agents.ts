import { spawn, type ChildProcess } from 'node:child_process';
import fs from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { fileURLToPath } from 'node:url';
import { afterAll } from 'vitest';
import { WebSocket } from 'ws';
import { PROTOCOL_VERSION, parseServiceMessage, type Hello, type ServiceMessage } from '../../src/agents/protocol.js';
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
  /** A command the agent is started through, which execs the rest of its arguments (a namespace of its own). */
  launcher?: string[];
  /** Another agent file than this build's, e.g. the previous release's. */
  bundle?: string;
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
    options.bundle ?? AGENT_BUNDLE,
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
  const [program, ...before] = [...(options.launcher ?? []), process.execPath];
  const child = spawn(program!, [...before, ...args], { stdio: ['ignore', 'pipe', 'pipe'], env: { PATH: process.env.PATH ?? '/usr/bin:/bin', HOME: os.tmpdir() } });
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

/**
 * A hand-written agent: the service's real wire protocol (src/agents/protocol.ts) over a real
 * TLS WebSocket with a real enrolled credential, but it says whatever a test makes it say, as a
 * hostile or broken agent could.
 */
export interface RawAgent {
  /** Every service message received, in order. */
  received: ServiceMessage[];
  send(message: unknown): void;
  /** The next service message of this type (one already received and not yet taken counts). */
  next<T extends ServiceMessage['type']>(type: T, timeoutMs?: number): Promise<Extract<ServiceMessage, { type: T }>>;
  /** Says hello (with the given lists) and waits for the welcome. */
  hello(lists?: Partial<Pick<Hello, 'running' | 'interrupted' | 'finished'>>): Promise<Extract<ServiceMessage, { type: 'welcome' }>>;
  close(): Promise<void>;
}

export async function connectRawAgent(httpsUrl: string, token: string, hostname: string): Promise<RawAgent> {
  const socket = new WebSocket(`${httpsUrl.replace(/^https/, 'wss')}/api/v1/agents/connect`, { headers: { authorization: `Bearer ${token}` }, rejectUnauthorized: false });
  const received: ServiceMessage[] = [];
  const taken = new Set<ServiceMessage>();
  socket.on('message', (data) => {
    const message = parseServiceMessage(String(data));
    if (message) received.push(message);
  });
  const closed = new Promise<void>((resolve) => socket.once('close', () => resolve()));
  await new Promise((resolve, reject) => socket.once('open', resolve).once('error', reject));
  const next: RawAgent['next'] = (type, timeoutMs = 20_000) => waitFor(() => {
    const found = received.find((m) => m.type === type && !taken.has(m));
    if (found) taken.add(found);
    return found as Extract<ServiceMessage, { type: typeof type }> | undefined;
  }, `a ${type} message for ${hostname}`, timeoutMs);
  const send = (message: unknown) => socket.send(typeof message === 'string' ? message : JSON.stringify(message));
  return {
    received,
    send,
    next,
    hello: (lists = {}) => {
      send({ type: 'hello', v: PROTOCOL_VERSION, hostname, tags: [], os: 'Linux (hand-written agent)', arch: 'x64', version: 'raw', running: [], interrupted: [], ...lists });
      return next('welcome');
    },
    close: () => {
      socket.close();
      return closed;
    },
  };
}
