import { spawn } from 'node:child_process';
import { X509Certificate } from 'node:crypto';
import fs from 'node:fs';
import path from 'node:path';
import { afterEach, describe, expect, it } from 'vitest';
import { createTestDatabase, type TestDatabase } from './support/databases.js';
import { PITCREW_BIN, runCli, startServer, type ServerProcess } from './support/process.js';
import { waitFor } from './support/wait.js';

/** The fingerprint of the certificate the server made, as `openssl x509 -fingerprint -sha256` prints it. */
const certificateFingerprint = (database: TestDatabase) => new X509Certificate(fs.readFileSync(path.join(database.dataDir, 'tls/cert.pem'))).fingerprint256;

/** A pino-pretty line: the local time, the level, the message. */
const PRETTY_LINE = /^\[\d{4}-\d\d-\d\d \d\d:\d\d:\d\d\.\d{3}\] (?:INFO|WARN|ERROR|DEBUG): /;
const FINGERPRINT_LINE = /^\[[^\]]+\] INFO: pin this certificate on agents with --server-fingerprint ([0-9A-F:]{95})$/m;

/** A server process starts in seconds, more on a loaded machine. */
const SERVER_TEST_MS = 120_000;

const lines = (text: string) => text.split('\n').filter((line) => line.trim() !== '');

describe('pitcrew server logs', () => {
  const cleanups: (() => Promise<void>)[] = [];
  afterEach(async () => {
    for (const cleanup of cleanups.splice(0).reverse()) await cleanup();
  });

  async function database(): Promise<TestDatabase> {
    const made = await createTestDatabase('sqlite');
    cleanups.push(() => made.drop());
    return made;
  }

  async function server(env: Record<string, string>): Promise<ServerProcess> {
    const started = await startServer(env);
    cleanups.push(() => started.stop());
    return started;
  }

  it('writes JSON lines when stdout is not a terminal, the agent flag for the certificate in a record of its own', async () => {
    const db = await database();
    const service = await server(db.env);
    const line = await waitFor(() => lines(service.output()).find((text) => text.includes('--server-fingerprint')), 'the fingerprint line');
    expect(JSON.parse(line)).toMatchObject({ level: 30, msg: `pin this certificate on agents with --server-fingerprint ${certificateFingerprint(db)}` });
    for (const text of lines(service.output())) expect(() => JSON.parse(text), text).not.toThrow();
  }, SERVER_TEST_MS);

  it('lays lines out for people with PITCREW_LOG_FORMAT=pretty, the API key of a refused call still redacted', async () => {
    const db = await database();
    const tenant = JSON.parse((await runCli(['bootstrap', '--json'], db.env)).stdout) as { apiKey: string; token: string };
    const service = await server({ ...db.env, PITCREW_LOG_FORMAT: 'pretty' });
    const fingerprint = await waitFor(() => FINGERPRINT_LINE.exec(service.output())?.[1], 'the fingerprint line');
    expect(fingerprint).toBe(certificateFingerprint(db));

    const made = await fetch(`${service.url}/api/v1/integrations`, {
      method: 'POST',
      headers: { authorization: `Bearer ${tenant.token}`, 'content-type': 'application/json' },
      body: JSON.stringify({ name: 'prometheus', type: 'alertmanager' }),
    });
    const integration = (await made.json()) as { id: string; url: string };
    // The URL names the key's place (keys are stored hashed); the tool is given the key in it.
    const url = integration.url.replace('<api_key>', tenant.apiKey);
    const refused = await fetch(url, { method: 'POST', headers: { 'content-type': 'application/json' }, body: '{"alerts": [' });
    expect(refused.status).toBe(400);

    await waitFor(() => service.output().includes('INFO: request refused'), 'the refusal logged');
    expect(service.output()).toContain(`"url": "/api/v1/trigger/channel/alertmanager/[REDACTED]/${integration.id}"`);
    expect(service.output()).not.toContain(tenant.apiKey);
    // Every record starts a line of the formatter's own; its fields follow, indented.
    expect(lines(service.output()).filter((text) => !text.startsWith(' ') && !PRETTY_LINE.test(text))).toEqual([]);
  }, SERVER_TEST_MS);

  it('is pretty by default on a terminal: pitcrew server under a pseudo-terminal, stopped with Ctrl-C', async () => {
    const db = await database();
    // script(1) of util-linux runs the command on a pseudo-terminal of its own and copies its output here.
    const command = `exec '${process.execPath}' '${PITCREW_BIN}' server`;
    const child = spawn('script', ['--quiet', '--flush', '--return', '--command', command, '/dev/null'], {
      env: { PATH: process.env.PATH ?? '/usr/bin:/bin', HOME: process.env.HOME ?? '/tmp', TERM: 'xterm', ...db.env, PORT: '0', PITCREW_TLS_PORT: '0', PITCREW_METRICS_ADDR: 'off', HOST: '127.0.0.1' },
      stdio: ['pipe', 'pipe', 'pipe'],
    });
    let raw = '';
    child.stdout.on('data', (chunk) => (raw += chunk));
    child.stderr.on('data', (chunk) => (raw += chunk));
    const exited = new Promise<number | null>((resolve) => child.once('exit', (code) => resolve(code)));
    cleanups.push(async () => {
      if (child.exitCode === null) child.kill('SIGKILL');
      await exited;
    });
    // What the terminal shows, without its colours and carriage returns.
    const shown = () => raw.replace(/\x1b\[[0-9;]*m/g, '').replaceAll('\r', ''); // eslint-disable-line no-control-regex

    const fingerprint = await waitFor(() => FINGERPRINT_LINE.exec(shown())?.[1], 'the fingerprint line', 60_000).catch((error: Error) => {
      throw new Error(`${error.message}; the terminal shows:\n${shown()}`);
    });
    expect(fingerprint).toBe(certificateFingerprint(db));
    expect(raw).toContain('\x1b[32mINFO\x1b[39m');
    expect(lines(shown()).filter((text) => !text.startsWith(' ') && !PRETTY_LINE.test(text))).toEqual([]);

    child.stdin.write('\x03');
    expect(await exited).toBe(0);
    expect(shown()).toMatch(/INFO: stopped$/m);
  }, SERVER_TEST_MS);
});
