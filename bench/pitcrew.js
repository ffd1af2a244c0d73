// Starts pitcrew the way both benchmarks measure it: fresh storage, a tenant, the server on free
// loopback ports, one webhook rule (script `true` on the trigger host), the tenant throttle raised.
/* global fetch, AbortSignal */
import net from 'node:net';
import os from 'node:os';
import path from 'node:path';
import { freePort, makeTempDir, spawnChild, waitFor } from './procs.js';
import { prepareStorage } from './storage.js';

export async function startPitcrew({ root, env, tempPrefix, ruleName, serverEntry = 'bin/pitcrew.js', nodeFlags = [], logLevel = env.PITCREW_LOG_LEVEL ?? 'warn', progress = () => {} }) {
  const tmp = makeTempDir(path.join(os.tmpdir(), tempPrefix));
  const dataDir = path.join(tmp, 'data');
  const storage = await prepareStorage(env.DATABASE_URL || undefined, dataDir);

  // The server's environment: ours minus DATABASE_URL (the admin URL), plus the bench settings.
  const serverEnv = { ...env, PITCREW_DATA_DIR: dataDir, PITCREW_LOG_LEVEL: logLevel, ...storage.serverEnv };
  if (!storage.serverEnv.DATABASE_URL) delete serverEnv.DATABASE_URL;

  progress(`bootstrapping a tenant (${storage.kind})`);
  const boot = spawnChild('pitcrew bootstrap', ['bin/pitcrew.js', 'bootstrap', '--json'], { cwd: root, env: serverEnv });
  const { code } = await boot.exited;
  const bootLine = boot.output().split('\n').find((l) => l.startsWith('{'));
  if (code !== 0 || !bootLine) throw new Error(`bootstrap failed (exit ${code}):\n${boot.output()}`);
  const { apiKey, token } = JSON.parse(bootLine);

  const port = await freePort();
  const tlsPort = await freePort();
  const base = `http://127.0.0.1:${port}`;
  const metricsPort = await freePort();
  // /metrics is served on a listener of its own (not on the API ports without a token).
  const metricsBase = `http://127.0.0.1:${metricsPort}`;
  /**
   * The server on the same ports and data: the first start, and each restart. `listeningAt` is
   * when the agents' TLS port listened: the time of the server's own "agents connect to" line at
   * log level info, else when the port first took a probe's connection. The probe can be seconds
   * late: with a storm of agents reconnecting, the accept queue is full and its SYN is dropped
   * and sent again after 1, 3, 7 s (measured: listening 3.7 s after a kill, probed at 19.1 s).
   * `extraEnv` adds to the server's environment for this start (e.g. a backup schedule); `onLine`
   * sees each line it prints.
   */
  // A server started with --cpu-prof on a loaded machine (load 25 on 2 cores) can take over 30 s.
  const startServer = async ({ healthTimeoutMs = Number(process.env.BENCH_START_TIMEOUT_MS ?? 30_000), onSpawn = () => {}, extraEnv = {}, onLine: onOwnLine = () => {} } = {}) => {
    let loggedAt;
    const onLine = (line) => {
      if (loggedAt === undefined && line.includes('"https":"')) loggedAt = JSON.parse(line).time;
      onOwnLine(line);
    };
    const child = spawnChild('pitcrew server', [...nodeFlags, serverEntry, 'server'], {
      cwd: root,
      env: { ...serverEnv, ...extraEnv, HOST: '127.0.0.1', PORT: String(port), PITCREW_TLS_PORT: String(tlsPort), PITCREW_METRICS_ADDR: `127.0.0.1:${metricsPort}` },
      onLine,
    });
    onSpawn(child.pid);
    await waitFor(child, async () => loggedAt !== undefined || accepts(tlsPort), healthTimeoutMs, `pitcrew listening on ${tlsPort}`, 10);
    child.listeningAt = loggedAt ?? Date.now();
    await waitFor(child, async () => (await fetch(`${base}/healthz`, { signal: AbortSignal.timeout(1000) })).ok, healthTimeoutMs, 'pitcrew /healthz');
    return child;
  };
  const server = await startServer();

  const api = async (method, url, body) => {
    const res = await fetch(`${base}${url}`, {
      method,
      headers: { authorization: `Bearer ${token}`, 'content-type': 'application/json' },
      body: body === undefined ? undefined : JSON.stringify(body),
      signal: AbortSignal.timeout(10_000),
    });
    const text = await res.text();
    if (!res.ok) throw new Error(`${method} ${url} → ${res.status}: ${text}`);
    return JSON.parse(text);
  };
  const rule = await api('POST', '/api/v1/rules', {
    name: ruleName,
    trigger: { type: 'webhook' },
    action: { type: 'script', flavour: 'autofix', runbook: { script: 'true' } },
    target: { type: 'trigger_host' },
    infrastructureType: 'On_Premise',
    // A storm on a guarded rule: each batch reads the rule's history (docs/safety.md).
    ...(env.BENCH_RULE_SAFETY === '1' ? { actionLimit: { max: 3, windowSeconds: 3600 }, flapping: { enabled: true } } : {}),
  });
  await api('PATCH', '/api/v1/tenant', { throttle: { ratePerSecond: 10_000_000, burst: 10_000_000 } });
  const webhookPath = `/api/v1/trigger/channel/webhook/${apiKey}/${rule.trigger.triggerId}`;
  return { tmp, dataDir, storage, server, startServer, port, tlsPort, base, metricsBase, apiKey, token, api, triggerId: rule.trigger.triggerId, webhookPath };
}

/** Whether something on 127.0.0.1 accepts a TCP connection on the port now. */
function accepts(port) {
  return new Promise((resolve) => {
    const socket = net.connect(port, '127.0.0.1');
    socket.once('connect', () => {
      socket.destroy();
      resolve(true);
    });
    socket.once('error', () => resolve(false));
  });
}
