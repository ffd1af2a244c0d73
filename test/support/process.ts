import { spawn, type ChildProcess } from 'node:child_process';
import net from 'node:net';
import path from 'node:path';
import { fileURLToPath } from 'node:url';

const root = path.resolve(path.dirname(fileURLToPath(import.meta.url)), '../..');
export const PITCREW_BIN = path.join(root, 'bin/pitcrew.js');

export interface CliResult {
  code: number | null;
  stdout: string;
  stderr: string;
}

/** Runs the built `pitcrew` command (npm test builds it first; `bin`: another build's) with only the given environment. */
export function runCli(args: string[], env: Record<string, string>, options: { bin?: string } = {}): Promise<CliResult> {
  return new Promise((resolve, reject) => {
    const child = spawn(process.execPath, [options.bin ?? PITCREW_BIN, ...args], { env: baseEnv(env), stdio: ['ignore', 'pipe', 'pipe'] });
    let stdout = '';
    let stderr = '';
    child.stdout.on('data', (chunk) => (stdout += chunk));
    child.stderr.on('data', (chunk) => (stderr += chunk));
    child.on('error', reject);
    child.on('close', (code) => resolve({ code, stdout, stderr }));
  });
}

export interface ServerProcess {
  url: string;
  httpsUrl: string;
  /** The metrics listener (PITCREW_METRICS_ADDR), unless the test turned it off. */
  metricsUrl: string;
  /** SHA-256 fingerprint of the service's (self-signed) certificate, for agents to pin. */
  fingerprint: string;
  child: ChildProcess;
  output(): string;
  /** SIGKILL: no shutdown code runs, like a crash or an OOM kill. */
  kill(): Promise<void>;
  stop(): Promise<void>;
}

/**
 * Starts `pitcrew server` from the built tree (`bin`: another build's, e.g. the previous release);
 * `cwd` is where a relative PITCREW_DATA_DIR (default ./data) lands.
 */
export async function startServer(env: Record<string, string>, options: { cwd?: string; bin?: string } = {}): Promise<ServerProcess> {
  const port = env.PORT ?? String(await freePort());
  const tlsPort = env.PITCREW_TLS_PORT ?? String(await freePort());
  // Servers of tests running at once must not meet on the default metrics port.
  const metricsAddr = env.PITCREW_METRICS_ADDR ?? `127.0.0.1:${await freePort()}`;
  const child = spawn(process.execPath, [options.bin ?? PITCREW_BIN, 'server'], {
    cwd: options.cwd,
    env: baseEnv({ PORT: port, PITCREW_TLS_PORT: tlsPort, PITCREW_METRICS_ADDR: metricsAddr, HOST: '127.0.0.1', PITCREW_LOG_LEVEL: 'info', PITCREW_AGENT_HEARTBEAT_SECONDS: '1', ...env }),
    stdio: ['ignore', 'pipe', 'pipe'],
  });
  let output = '';
  child.stdout!.on('data', (chunk) => (output += chunk));
  child.stderr!.on('data', (chunk) => (output += chunk));
  const exited = new Promise<void>((resolve) => child.once('exit', () => resolve()));
  await new Promise<void>((resolve, reject) => {
    const onData = () => {
      if (output.includes('agents connect to')) {
        child.stdout!.off('data', onData);
        resolve();
      }
    };
    child.stdout!.on('data', onData);
    child.once('exit', (code) => reject(new Error(`server exited with ${code} before listening:\n${output}`)));
  });
  const signal = (name: NodeJS.Signals, limitMs?: number) => async () => {
    if (child.exitCode === null && child.signalCode === null) child.kill(name);
    if (limitMs === undefined) return exited;
    // A stop that hangs fails with what the server said, not with the test's bare timeout.
    let timer: NodeJS.Timeout | undefined;
    const late = new Promise<never>((_, reject) => {
      timer = setTimeout(() => reject(new Error(`the server did not stop within ${limitMs} ms of ${name}; its output ends:\n${output.slice(-4000)}`)), limitMs);
    });
    await Promise.race([exited, late]).finally(() => clearTimeout(timer));
  };
  const fingerprint = /fingerprint ([0-9A-F:]{95})/.exec(output)?.[1] ?? '';
  return { url: `http://127.0.0.1:${port}`, httpsUrl: `https://127.0.0.1:${tlsPort}`, metricsUrl: `http://${metricsAddr}`, fingerprint, child, output: () => output, kill: signal('SIGKILL'), stop: signal('SIGTERM', 30_000) };
}

function baseEnv(env: Record<string, string>): NodeJS.ProcessEnv {
  return { PATH: process.env.PATH ?? '/usr/bin:/bin', HOME: process.env.HOME ?? '/tmp', ...env };
}

export function freePort(): Promise<number> {
  return new Promise((resolve, reject) => {
    const server = net.createServer();
    server.once('error', reject);
    server.listen(0, '127.0.0.1', () => {
      const { port } = server.address() as net.AddressInfo;
      server.close(() => resolve(port));
    });
  });
}
