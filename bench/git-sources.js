// Git sources benchmark (bench/README.md): runbooks read from a tenant's git repository at an
// unchanged commit by GitSources.read (src/runbooks/git/sources.ts, what the execution stage calls
// before each execution) against a bare `git ls-remote` of the same server, in the same run.
//
// - The server: `git http-backend` behind HTTPS with a token on loopback, in this process: the
//   tests' own server (test/support/git-server.ts, bundled with esbuild into dist/bench/ at start),
//   serving one repository with a 2 KiB runbook. It counts the requests it answers.
// - pitcrew: a GitSources built as server/app.ts builds it (from dist/), over a SQLite store in a
//   temp data directory holding the repository (the token sealed), the egress policy opened to
//   loopback as an operator would. One cold read fills the cache; then each read asks the server
//   where main is (git ls-remote), finds the commit in the cache, and reads the file (git ls-tree,
//   git cat-file): three git processes, one of them talking to the server.
// - The baseline: `git ls-remote` of the same URL, for the same ref, with the same token, CA and
//   git configuration (connection.ts gitEnv): the one round trip to the server any fresh read
//   needs, without what pitcrew adds (its checks, the cache lookup, the file read).
// Both run R reads, C at a time, in alternating rounds; the median round of each is reported.
// Exit 0 when every read returned the runbook at the commit pushed and the server saw one fetch
// (the cold read's) and no other; 1 otherwise; 2 when the time budget ran out.
import { execFileSync, spawn } from 'node:child_process';
import { createHash } from 'node:crypto';
import fs from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { fileURLToPath } from 'node:url';
import { performance } from 'node:perf_hooks';
import { build } from 'esbuild';
import pino from 'pino';
import { codeVersion, envNumber, fmtInt, fmtMs, fmtPct, inParallel, table } from './common.js';
import { percentile } from './load.js';
import { makeTempDir, onCleanup, runBench } from './procs.js';

const benchDir = path.dirname(fileURLToPath(import.meta.url));
const root = path.resolve(benchDir, '..');
const env = process.env;
const number = (name, fallback, min) => envNumber(env, name, fallback, min);

const READS = Math.round(number('BENCH_GIT_READS', 200, 1));
const CONCURRENCY = Math.round(number('BENCH_GIT_CONCURRENCY', 4, 1));
const ROUNDS = Math.round(number('BENCH_GIT_ROUNDS', 3, 1));
const BUDGET_SECONDS = number('BENCH_TIMEOUT', 120 + ROUNDS * READS * 0.2, 10);
const TOKEN = 'ghp_bench0123456789abcdefghijklmnopqrst';
const SCRIPT = `#!/bin/sh\n# disk cleanup\n${'find /var/tmp -mtime +7 -delete  # keep a week\n'.repeat(40)}df -h /\n`;

const log = (line = '') => process.stdout.write(`${line}\n`);
const progress = (line) => process.stderr.write(`bench: ${line}\n`);
const codeAtStart = codeVersion(root);
const loadBefore = os.loadavg().map((l) => l.toFixed(2)).join(' ');

async function main() {
  const startedAt = Date.now();
  for (const file of ['dist/src/runbooks/git/sources.js', 'dist/src/store/database.js']) {
    if (!fs.existsSync(path.join(root, file))) throw new Error(`${file} is missing: run npm run build first (npm run bench does)`);
  }
  const dist = (file) => import(path.join(root, 'dist/src', file));
  const [{ GitSources }, { gitEnv }, { openStore }, { migrateToLatest }, { bootstrapTenant }, { SecretBox }, { EgressPolicy }, { createRepository }, { checkNewRepository }, { GIT_DEFAULTS }] = await Promise.all([
    dist('runbooks/git/sources.js'), dist('runbooks/git/connection.js'), dist('store/database.js'), dist('store/migrations.js'), dist('tenants/bootstrap.js'),
    dist('identity/secret-box.js'), dist('egress/policy.js'), dist('runbooks/git/repository.js'), dist('runbooks/git/validate.js'), dist('config/config.js'),
  ]);

  // The tests' git server, bundled as it is (only node: and selfsigned imports, resolved from node_modules).
  const serverModule = path.join(root, 'dist/bench/git-server.mjs');
  await build({ entryPoints: [path.join(root, 'test/support/git-server.ts')], outfile: serverModule, bundle: true, platform: 'node', format: 'esm', packages: 'external', logLevel: 'warning' });
  const { startHttpsGitServer, TestRepository } = await import(serverModule);

  const work = makeTempDir(path.join(os.tmpdir(), 'pitcrew-bench-git-'));
  const repoRoot = path.join(work, 'repos');
  fs.mkdirSync(repoRoot);
  const repository = new TestRepository(repoRoot, 'ops');
  onCleanup(() => repository.remove());
  const commit = repository.commit({ 'runbooks/disk-cleanup.sh': SCRIPT });
  const server = await startHttpsGitServer({ root: repoRoot, token: TOKEN });
  onCleanup(() => server.close());
  const url = server.url('ops');

  const dataDir = path.join(work, 'data');
  const store = openStore({ dataDir });
  onCleanup(() => store.close());
  await migrateToLatest(store);
  const tenant = await bootstrapTenant(store, 'bench');
  const box = new SecretBox(Buffer.alloc(32, 7));
  const row = await createRepository(store.db, box, tenant.tenantId, checkNewRepository({ name: 'ops', url, ref: 'main', credential: { token: TOKEN } }), Date.now());
  const sources = new GitSources({
    db: store.db, box, egress: new EgressPolicy(['127.0.0.0/8']), logger: pino({ level: 'silent' }),
    settings: { ...GIT_DEFAULTS, caPem: server.caPem, cacheDir: path.join(dataDir, 'git'), path: env.PATH || GIT_DEFAULTS.path },
  });
  const source = { repositoryId: row.id, path: 'runbooks/disk-cleanup.sh' };

  // The baseline's git: the same configuration pitcrew's has (gitEnv), the same CA file (the public
  // CAs and the server's, which GitSources writes into its cache directory: curl reads it whole on
  // every connection, as it reads the system's bundle when none is set), the token in the environment.
  const caFile = path.join(dataDir, 'git', 'ca-bundle.pem');
  const home = path.join(work, 'home');
  fs.mkdirSync(home);
  const bareEnv = gitEnv(
    { PATH: env.PATH || GIT_DEFAULTS.path, HOME: home, LC_ALL: 'C', GIT_TERMINAL_PROMPT: '0', GIT_CONFIG_NOSYSTEM: '1', GIT_CONFIG_GLOBAL: '/dev/null' },
    [['http.sslCAInfo', caFile], ['http.extraHeader', `Authorization: Basic ${Buffer.from(`x-access-token:${TOKEN}`).toString('base64')}`]],
  );
  const lsRemote = () => new Promise((resolve, reject) => {
    const child = spawn('git', ['ls-remote', url, 'refs/tags/main', 'refs/tags/main^{}', 'refs/heads/main', 'refs/heads/main^{}'], { env: bareEnv, stdio: ['ignore', 'pipe', 'pipe'] });
    let out = '';
    child.stdout.on('data', (chunk) => (out += chunk));
    child.once('error', reject);
    child.once('close', (code) => (code === 0 && out.startsWith(commit) ? resolve() : reject(new Error(`git ls-remote exited ${code}: ${out}`))));
  });

  const failures = [];
  const pitcrewRead = async () => {
    const read = await sources.read(tenant.tenantId, source);
    if (read.commit !== commit || read.script !== SCRIPT || read.sha256 !== createHash('sha256').update(SCRIPT).digest('hex')) failures.push(`read returned ${read.commit} ${read.sha256}`);
  };
  const targets = { pitcrew: pitcrewRead, bare: lsRemote };

  progress('cold read (fetches the commit into the cache)');
  const cold0 = performance.now();
  await pitcrewRead();
  const coldMs = performance.now() - cold0;
  const fetchesAfterCold = server.count('ops', 'fetch');
  if (!fs.existsSync(caFile)) throw new Error(`GitSources wrote no CA bundle at ${caFile}`);
  progress('warm-up: 20 of each');
  for (const run of Object.values(targets)) await inParallel(Array.from({ length: 20 }), CONCURRENCY, run);

  const rounds = [];
  for (let round = 0; round < ROUNDS; round++) {
    const results = {};
    for (const key of round % 2 === 0 ? ['pitcrew', 'bare'] : ['bare', 'pitcrew']) {
      progress(`round ${round + 1}/${ROUNDS} ${key}: ${READS} reads, ${CONCURRENCY} at a time`);
      results[key] = await measure(targets[key]);
    }
    rounds.push(results);
  }
  const median = (key) => [...rounds.map((r) => r[key])].sort((a, b) => a.perSecond - b.perSecond)[Math.floor((rounds.length - 1) / 2)];
  const result = { pitcrew: median('pitcrew'), bare: median('bare') };

  const fetches = server.count('ops', 'fetch');
  const lsRefs = server.count('ops', 'ls-refs');
  const expectedLsRefs = 1 + 2 * 20 + 2 * ROUNDS * READS;
  const gitVersion = execFileSync('git', ['--version'], { encoding: 'utf8' }).trim();

  const cpu = os.cpus();
  log();
  log('pitcrew git sources benchmark');
  log(`  machine      ${cpu.length} × ${cpu[0]?.model ?? 'unknown CPU'}, ${os.platform()} ${os.release()}, node ${process.version}, ${gitVersion}`);
  log(`  code         ${codeAtStart}; load average before the run ${loadBefore}`);
  log(`  server       git http-backend behind HTTPS (token, TLS 1.3) on loopback, in this process; one ${fmtInt(Buffer.byteLength(SCRIPT))}-byte runbook`);
  log(`  load         ${fmtInt(READS)} reads per round, ${CONCURRENCY} at a time, ${ROUNDS} alternating rounds (median round shown)`);
  log('  baseline     git ls-remote of the same URL and ref, same token, CA file and git configuration');
  log();
  const round = (key) => rounds.map((r) => fmtInt(r[key].perSecond)).join(' / ');
  log(table([
    ['figure', '', 'GitSources.read', 'git ls-remote', 'pitcrew / bare'],
    ['reads/s', '', fmtInt(result.pitcrew.perSecond), fmtInt(result.bare.perSecond), fmtPct(result.pitcrew.perSecond / result.bare.perSecond)],
    ['  each round', '', round('pitcrew'), round('bare'), ''],
    ['p50 ms', '', fmtMs(result.pitcrew.p50), fmtMs(result.bare.p50), `${(result.pitcrew.p50 / result.bare.p50).toFixed(2)} ×`],
    ['p99 ms', '', fmtMs(result.pitcrew.p99), fmtMs(result.bare.p99), `${(result.pitcrew.p99 / result.bare.p99).toFixed(2)} ×`],
    ['CPU per read', 'this process', `${fmtMs(result.pitcrew.selfCpuMs)} ms`, `${fmtMs(result.bare.selfCpuMs)} ms`, ''],
    ['', 'git processes', `${fmtMs(result.pitcrew.childrenCpuMs)} ms`, `${fmtMs(result.bare.childrenCpuMs)} ms`, ''],
    ['', 'both', `${fmtMs(cpuOf(result.pitcrew))} ms`, `${fmtMs(cpuOf(result.bare))} ms`, `${(cpuOf(result.pitcrew) / cpuOf(result.bare)).toFixed(2)} ×`],
  ]));
  log(`  cold read (ls-remote, fetch --depth 1 into an empty cache, read): ${fmtMs(coldMs)} ms`);
  log('  reads/s: R ÷ the round\'s wall time (the machine\'s other work moves it; compare within a run). CPU per read ÷ R:');
  log('       this process (GitSources; the git server\'s TLS and CGI plumbing, in both columns) and the git processes it and the');
  log('       server ran (git, git-remote-https, git http-backend, upload-pack): the other work on the machine is in neither.');
  log();
  const checks = [
    [failures.length === 0, `every read returned the runbook at ${commit.slice(0, 12)} (${failures.length} did not${failures.length ? `: ${failures[0]}` : ''})`],
    [fetchesAfterCold === 1 && fetches === 1, `the server saw one fetch, the cold read's (${fetches})`],
    [lsRefs === expectedLsRefs, `the server answered ls-refs once per read and per ls-remote (${fmtInt(lsRefs)}, expected ${fmtInt(expectedLsRefs)})`],
  ];
  log('verification');
  for (const [ok, what] of checks) log(`  ${ok ? 'OK' : 'FAILED'}: ${what}`);
  log();
  log(`done in ${((Date.now() - startedAt) / 1000).toFixed(0)} s`);
  return checks.every(([ok]) => ok);
}

/**
 * CPU seconds of this process and of its children that ended (/proc/self/stat utime, stime,
 * cutime, cstime): GitSources, every git it ran (with git-remote-https, which git waited for) and
 * the server's git http-backend and upload-pack. The machine's other work is not in it.
 */
function treeCpuSeconds() {
  const stat = fs.readFileSync('/proc/self/stat', 'utf8');
  const fields = stat.slice(stat.lastIndexOf(')') + 2).split(' ').map(Number);
  return { self: (fields[11] + fields[12]) / 100, children: (fields[13] + fields[14]) / 100 };
}

const cpuOf = (result) => result.selfCpuMs + result.childrenCpuMs;

/** R runs of `run`, C at a time: the rate, the latencies, and the CPU time each took. */
async function measure(run) {
  const latencies = [];
  const cpu0 = treeCpuSeconds();
  const wall0 = performance.now();
  await inParallel(Array.from({ length: READS }), CONCURRENCY, async () => {
    const t0 = performance.now();
    await run();
    latencies.push(performance.now() - t0);
  });
  const seconds = (performance.now() - wall0) / 1000;
  latencies.sort((a, b) => a - b);
  return {
    perSecond: READS / seconds,
    p50: percentile(latencies, 0.5),
    p99: percentile(latencies, 0.99),
    selfCpuMs: ((treeCpuSeconds().self - cpu0.self) / READS) * 1000,
    childrenCpuMs: ((treeCpuSeconds().children - cpu0.children) / READS) * 1000,
  };
}

runBench(main, BUDGET_SECONDS, progress);
