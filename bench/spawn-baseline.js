// The baseline of the end-to-end benchmark (bench/e2e.js): the machine's raw process-spawn rate.
//
//   node bench/spawn-baseline.js COUNT CONCURRENCY CWD
//
// Spawns `/bin/sh -c true` COUNT times, keeping CONCURRENCY of them alive at once, the way the agent
// starts a script (agent/runner.ts): /bin/sh, a new process group (detached), stdin ignored, stdout
// and stderr piped, the agent's small clean environment, and a run counts as done when the process
// exited and both pipes closed. What the agent does around the spawn (journal, script file, run
// directory, WebSocket messages) is left out: that is what the end-to-end figure adds.
//
// Started by bench/e2e.js as a child process: it prints {"ready":true} on stdout, waits for SIGUSR2
// (so that several spawners start together), runs, prints one JSON line with its result and exits.
import { spawn } from 'node:child_process';
import fs from 'node:fs';

const [count, concurrency] = process.argv.slice(2, 4).map(Number);
const cwd = process.argv[4] ?? process.cwd();
if (!(count >= 1) || !(concurrency >= 1)) {
  process.stderr.write('usage: node bench/spawn-baseline.js COUNT CONCURRENCY [CWD]\n');
  process.exit(2);
}

// As agent/environment.ts baseEnvironment() for the user this runs as.
const user = process.env.USER ?? (process.getuid?.() === 0 ? 'root' : 'nobody');
const env = { PATH: '/usr/local/sbin:/usr/local/bin:/usr/sbin:/usr/bin:/sbin:/bin', HOME: process.env.HOME ?? '/', LANG: 'C.UTF-8', USER: user, LOGNAME: user };

/** CPU seconds of this process, and of its children that ended (the shells), from /proc. */
function cpu() {
  const stat = fs.readFileSync('/proc/self/stat', 'utf8');
  const f = stat.slice(stat.lastIndexOf(')') + 2).split(' ').map(Number);
  return { self: (f[11] + f[12]) / 100, children: (f[13] + f[14]) / 100 };
}

function runOne() {
  return new Promise((resolve) => {
    const child = spawn('/bin/sh', ['-c', 'true'], { cwd, env, detached: true, stdio: ['ignore', 'pipe', 'pipe'] });
    let pending = 3;
    let ok = false;
    const done = () => --pending === 0 && resolve(ok);
    child.once('error', () => {
      if (child.pid === undefined) resolve(false);
    });
    child.stdout.resume().once('close', done);
    child.stderr.resume().once('close', done);
    child.once('exit', (code) => {
      ok = code === 0;
      done();
    });
  });
}

async function run() {
  const cpu0 = cpu();
  const startedAt = Date.now();
  const t0 = performance.now();
  let next = 0;
  let ok = 0;
  let failed = 0;
  const lane = async () => {
    while (next < count) {
      next += 1;
      if (await runOne()) ok += 1;
      else failed += 1;
    }
  };
  await Promise.all(Array.from({ length: Math.min(concurrency, count) }, lane));
  const seconds = (performance.now() - t0) / 1000;
  const endedAt = Date.now();
  const cpu1 = cpu();
  process.stdout.write(`${JSON.stringify({ ok, failed, seconds, startedAt, endedAt, cpuSelf: cpu1.self - cpu0.self, cpuChildren: cpu1.children - cpu0.children })}\n`);
}

const keepAlive = setInterval(() => undefined, 1 << 30);
process.once('SIGTERM', () => process.exit(143));
process.once('SIGINT', () => process.exit(130));
process.once('SIGUSR2', () => {
  run().then(
    () => {
      clearInterval(keepAlive);
      process.exit(0);
    },
    (error) => {
      process.stderr.write(`${error?.stack ?? error}\n`);
      process.exit(1);
    },
  );
});
process.stdout.write('{"ready":true}\n');
