// Node-RED as a peer for bench/e2e.js's peers phase (bench/README.md, "Against Node-RED"): the
// same flow as pitcrew's webhook rule, "webhook → run one shell command": http in (POST /hook) →
// exec `true` (exec mode: child_process.exec, i.e. /bin/sh -c true) → http response, sent once
// the command has ended. Node-RED is installed from the npm registry at bench time, with npm,
// into a directory of its own (kept between runs: BENCH_NODE_RED_DIR), and never into pitcrew's.
/* global fetch, AbortSignal */
import { execFileSync } from 'node:child_process';
import fs from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { freePort, spawnChild, waitFor } from './procs.js';

export const NODE_RED_VERSION = '4.1.8';

const FLOW = [
  { id: 'bench-tab', type: 'tab', label: 'webhook → exec true' },
  { id: 'bench-in', type: 'http in', z: 'bench-tab', url: '/hook', method: 'post', upload: false, swaggerDoc: '', wires: [['bench-exec']] },
  // addpay '': the command is `true` alone, nothing of the message appended; outputs: stdout, stderr, return code.
  { id: 'bench-exec', type: 'exec', z: 'bench-tab', command: 'true', addpay: '', append: '', useSpawn: 'false', timer: '', winHeight: '', oldrc: false, wires: [['bench-out'], [], []] },
  { id: 'bench-out', type: 'http response', z: 'bench-tab', statusCode: '', headers: {}, wires: [] },
];

/** Installs node-red@NODE_RED_VERSION under `dir` unless it is there; returns its red.js. */
export function installNodeRed(dir, progress) {
  const redJs = path.join(dir, 'node_modules', 'node-red', 'red.js');
  const installed = path.join(dir, 'node_modules', 'node-red', 'package.json');
  if (fs.existsSync(installed) && JSON.parse(fs.readFileSync(installed, 'utf8')).version === NODE_RED_VERSION) return redJs;
  fs.mkdirSync(dir, { recursive: true });
  fs.writeFileSync(path.join(dir, 'package.json'), '{"private":true}\n');
  progress(`installing node-red@${NODE_RED_VERSION} into ${dir} (npm registry)`);
  execFileSync('npm', ['install', '--no-audit', '--no-fund', '--omit=dev', '--loglevel=error', `node-red@${NODE_RED_VERSION}`], { cwd: dir, stdio: ['ignore', 'ignore', 'inherit'], timeout: 600_000 });
  return redJs;
}

/** Starts Node-RED with the flow on a free loopback port, editor and admin API off; resolves once /hook answers. */
export async function startNodeRed({ tmp, env, progress }) {
  const dir = env.BENCH_NODE_RED_DIR || path.join(os.tmpdir(), `pitcrew-bench-node-red-${NODE_RED_VERSION}`);
  const redJs = installNodeRed(dir, progress);
  const userDir = path.join(tmp, 'node-red');
  fs.mkdirSync(userDir, { recursive: true });
  fs.writeFileSync(path.join(userDir, 'flows.json'), JSON.stringify(FLOW));
  const port = await freePort();
  const settings = {
    uiHost: '127.0.0.1',
    uiPort: port,
    httpAdminRoot: false,
    flowFile: 'flows.json',
    credentialSecret: false,
    logging: { console: { level: 'warn', metrics: false, audit: false } },
    diagnostics: { enabled: false },
    telemetry: { enabled: false },
    externalModules: { autoInstall: false },
  };
  fs.writeFileSync(path.join(userDir, 'settings.js'), `module.exports = ${JSON.stringify(settings, null, 2)};\n`);
  // The same small environment as pitcrew's agents get (their scripts' PATH and HOME).
  const child = spawnChild('node-red', [redJs, '--settings', path.join(userDir, 'settings.js'), '--userDir', userDir], { cwd: userDir, env: { PATH: env.PATH ?? '/usr/bin:/bin', HOME: userDir } });
  const probe = async () => (await fetch(`http://127.0.0.1:${port}/hook`, { method: 'POST', body: '{}', headers: { 'content-type': 'application/json' }, signal: AbortSignal.timeout(2000) })).ok;
  await waitFor(child, probe, 60_000, 'Node-RED answering POST /hook');
  return { child, port, path: '/hook' };
}
