// What one script run costs the agent, apart from the network (bench/README.md, "Agent cost"):
// CPU per run of a bare spawn of `sh -c true` (the baseline), of the agent's runner (run
// directory, environment, spawn, output, removal) started from this process and through the
// agent's spawn helper, and of its executor (the runner through the helper, plus the journal and
// the log lines), each with the same number of runs in flight, in this process.
// Usage: node bench/agent-cost.js [runs]   (needs dist/: npm run build)
import { spawn } from 'node:child_process';
import fs from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { fileURLToPath } from 'node:url';
import { cpuParts } from './procs.js';

const root = path.dirname(path.dirname(fileURLToPath(import.meta.url)));
const { ScriptRun } = await import(path.join(root, 'dist/agent/runner.js'));
const { Executor } = await import(path.join(root, 'dist/agent/executor.js'));
const { Journal } = await import(path.join(root, 'dist/agent/journal.js'));
const { RunDirs } = await import(path.join(root, 'dist/agent/run-dirs.js'));
const { DirectLauncher } = await import(path.join(root, 'dist/agent/launcher.js'));
const { HelperLauncher } = await import(path.join(root, 'dist/agent/spawn-helper.js'));
const { createLogger } = await import(path.join(root, 'dist/agent/log.js'));

const RUNS = Number(process.argv[2] ?? 600);
const IN_FLIGHT = 16;
const BASE_ENV = { PATH: '/usr/bin:/bin', HOME: os.homedir(), LANG: 'C.UTF-8', USER: 'bench', LOGNAME: 'bench' };
const EVENT_ENV = { HostName: 'web-1', AlarmName: 'disk_full', Key1: 'Value1' };

const work = fs.mkdtempSync(path.join(os.tmpdir(), 'pitcrew-agent-cost-'));
const settings = (dir) => ({ launcher: new DirectLauncher(), runDirs: new RunDirs(dir), maxOutputBytes: 1 << 20, maxArtifactBytes: 5 << 20, baseEnv: BASE_ENV, killGraceMs: 5000, drainMs: 2000 });
const idOf = (i) => `0190a4a4-0000-7000-8000-${String(i).padStart(12, '0')}`;
const spec = (i) => ({ executionId: idOf(i), flavour: 'autofix', interpreter: 'sh', script: 'true', env: EVENT_ENV, context: { PITCREW_EXECUTION_ID: idOf(i) }, timeoutSeconds: 60 });

function bareSpawn() {
  return new Promise((resolve) => {
    const child = spawn('/bin/sh', ['-c', 'true'], { env: { ...BASE_ENV, ...EVENT_ENV }, detached: true, stdio: ['ignore', 'pipe', 'pipe'] });
    let open = 3;
    const done = () => --open === 0 && resolve();
    child.stdout.once('close', done);
    child.stderr.once('close', done);
    child.once('exit', done);
  });
}

/** A process's CPU in µs: its own, and its children's that ended and were waited for. */
function cpuMicros(pid) {
  const { own, children } = cpuParts(pid);
  return { own: own * 1e6, children: children * 1e6 };
}

/** The scripts' CPU: this process's children's, and the spawn helper's children's when there is one. */
function childrenCpuMicros(helper) {
  return cpuMicros(process.pid).children + (helper ? cpuMicros(helper).children : 0);
}

async function measure(name, runOne, helper) {
  const cpu = process.cpuUsage();
  const children = childrenCpuMicros(helper);
  const helperCpu = helper ? cpuMicros(helper).own : 0;
  const started = performance.now();
  let next = 0;
  await Promise.all(Array.from({ length: IN_FLIGHT }, async () => {
    while (next < RUNS) await runOne(next++);
  }));
  const seconds = (performance.now() - started) / 1000;
  const own = process.cpuUsage(cpu);
  return { name, rate: RUNS / seconds, own: (own.user + own.system) / RUNS, helper: helper ? (cpuMicros(helper).own - helperCpu) / RUNS : 0, children: (childrenCpuMicros(helper) - children) / RUNS };
}

async function executorRuns(dir, launcher) {
  const journal = await Journal.open(path.join(dir, 'journal'));
  const log = fs.openSync('/dev/null', 'w');
  const executor = new Executor({ journal, allow: [], log: createLogger((line) => fs.writeSync(log, line)), runner: { ...settings(path.join(dir, 'runs')), launcher } });
  fs.mkdirSync(path.join(dir, 'runs'));
  const waiting = new Map();
  const sent = { started: 0, finished: 0 };
  const link = {
    send(message) {
      if (message.type in sent) sent[message.type] += 1;
      if (message.type !== 'finished') return;
      void executor.handle({ type: 'recorded', executionId: message.result.executionId });
      waiting.get(message.result.executionId)?.();
    },
  };
  await executor.connected(link, { hostId: 'h1', tenantId: 't1' }, []);
  const runOne = (i) => new Promise((resolve) => {
    waiting.set(idOf(i), resolve);
    void executor.handle({ type: 'execute', hostId: 'h1', tenantId: 't1', ...spec(i) });
  });
  // stopAll also ends the helper: its CPU, scripts' included, would reach this process's once it is waited for.
  return { runOne, sent, close: async () => { await executor.stopAll('the bench ended'); await journal.close(); fs.closeSync(log); } };
}

const results = [];
let startedShare;
try {
  results.push(await measure('bare spawn of sh -c true (baseline)', bareSpawn));
  const runnerDir = fs.mkdtempSync(path.join(work, 'runner-'));
  const runner = settings(runnerDir);
  results.push(await measure('agent runner (ScriptRun)', (i) => new ScriptRun(spec(i), runner, { spawned() {}, output() {} }).result));
  // As the agent runs: scripts start in its spawn helper (agent/spawn-helper.ts), whose CPU is its own column.
  const launcher = new HelperLauncher(new DirectLauncher(), createLogger(() => undefined));
  launcher.start();
  const helped = { ...settings(fs.mkdtempSync(path.join(work, 'helped-'))), launcher };
  results.push(await measure('agent runner, through the spawn helper', (i) => new ScriptRun(spec(i), helped, { spawned() {}, output() {} }).result, launcher.helperPid));
  const executor = await executorRuns(fs.mkdtempSync(path.join(work, 'executor-')), launcher);
  results.push(await measure('agent executor (runner + journal + log)', executor.runOne, launcher.helperPid));
  await executor.close();
  // A run that ends within the agent's hold on `started` tells its start in its result only.
  startedShare = executor.sent.started / executor.sent.finished;
} finally {
  fs.rmSync(work, { recursive: true, force: true });
}

const base = results[0];
console.log(`agent cost per run: ${RUNS} runs of \`true\`, ${IN_FLIGHT} in flight, node ${process.version}, ${os.cpus().length} CPUs`);
console.log(`${'what'.padEnd(42)} ${'runs/s'.padStart(7)} ${'own CPU us'.padStart(11)} ${'helper us'.padStart(10)} ${'sh CPU us'.padStart(10)} ${'own+helper / baseline'.padStart(22)}`);
for (const r of results) {
  console.log(`${r.name.padEnd(42)} ${r.rate.toFixed(0).padStart(7)} ${r.own.toFixed(0).padStart(11)} ${r.helper.toFixed(0).padStart(10)} ${r.children.toFixed(0).padStart(10)} ${`${((r.own + r.helper) / base.own).toFixed(2)} ×`.padStart(22)}`);
}
console.log(`executor: a separate \`started\` message for ${(startedShare * 100).toFixed(1)} % of runs (the others ended within its hold and told their start in the result)`);
