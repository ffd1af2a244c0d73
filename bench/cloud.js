// Cloud action benchmark (bench/README.md): EC2 reboots run by the service (src/actions/cloud/aws.ts)
// against the bare @aws-sdk/client-ec2 doing the same calls from this process, in the same run,
// against the same EC2 responder; with BENCH_CLOUD_PROVIDER=azure, Azure VM restarts
// (src/actions/cloud/azure.ts) against the bare Azure SDK, the same way (bench/cloud-azure.js); with
// BENCH_CLOUD_PROVIDER=gcp, Compute Engine resets (src/actions/cloud/gcp.ts) against the bare
// Google Cloud SDK (bench/cloud-gcp.js).
//
// - The responder: a minimal EC2 Query API on loopback in this process (below). It answers
//   RebootInstances and DescribeInstances (always `running`) for any instance id and counts the
//   requests by action, instance and access key.
// - pitcrew runs as a child process (bench/pitcrew.js) with PITCREW_AWS_ENDPOINT_URL pointing at
//   the responder; the bench stores an AWS credential (POST /api/v1/credentials) and a webhook rule
//   with action {type: 'cloud', operation: 'reboot', region: 'eu-west-1', credentialId,
//   instances: {from: 'payload'}}, infrastructureType CLOUD_EC2. R webhooks, each naming another
//   instance (InstanceId), are posted C at a time; each makes one execution, which the service runs:
//   RebootInstances, then DescribeInstances until `running` (it is at once: no 5 s poll).
// - The baseline: one EC2Client in this process, RebootInstances then DescribeInstances for R other
//   instances, C at a time.
// Exit 0 when every execution succeeded, each instance was rebooted exactly once and no execution
// ran twice; 1 otherwise; 2 when the time budget ran out.
/* global fetch, AbortSignal, URLSearchParams */
import { randomUUID } from 'node:crypto';
import fs from 'node:fs';
import http from 'node:http';
import os from 'node:os';
import path from 'node:path';
import { fileURLToPath } from 'node:url';
import { setTimeout as sleep } from 'node:timers/promises';
import { DescribeInstancesCommand, EC2Client, RebootInstancesCommand } from '@aws-sdk/client-ec2';
import { codeVersion, envNumber, fmtInt, fmtPct, inParallel, table } from './common.js';
import { percentile } from './load.js';
import { startPitcrew } from './pitcrew.js';
import { runBench, cpuSeconds, listenOnLoopback, machineProcessSeconds, onCleanup, ownCpuSeconds } from './procs.js';

const benchDir = path.dirname(fileURLToPath(import.meta.url));
const root = path.resolve(benchDir, '..');
const env = process.env;
const number = (name, fallback, min) => envNumber(env, name, fallback, min);

const EVENTS = Math.round(number('BENCH_CLOUD_EVENTS', 500, 1));
const CONCURRENCY = Math.round(number('BENCH_CLOUD_CONCURRENCY', 20, 1));
const WARMUP = Math.round(number('BENCH_CLOUD_WARMUP', 50, 0));
/** `shared`: one SDK client for the whole baseline; `per-operation`: a new one per instance. */
const BASELINE_CLIENT = env.BENCH_CLOUD_BASELINE_CLIENT || 'shared';
/** `aws` (EC2, the default), `azure` (Azure VMs) or `gcp` (Compute Engine). */
const PROVIDER = env.BENCH_CLOUD_PROVIDER || 'aws';
/** How long after the last webhook of a run its executions may take to end before the bench fails. */
const WAIT_SECONDS = number('BENCH_CLOUD_WAIT_SECONDS', 120, 5);
const BUDGET_SECONDS = number('BENCH_TIMEOUT', 120 + 2 * WAIT_SECONDS + 0.1 * (EVENTS + WARMUP), 10);
/** Quiet time after a run's executions all ended: a doubled run or call would show up meanwhile. */
const SETTLE_MS = 1000;

const REGION = 'eu-west-1';
const XMLNS = 'http://ec2.amazonaws.com/doc/2016-11-15/';
// Example keys in AWS's documentation style; the responder does not check signatures.
const PITCREW_KEY = { accessKeyId: 'AKIABENCHPITCREW0001', secretAccessKey: 'bench/pitcrew/secret/key/0000000000000000' };
const BASELINE_KEY = { accessKeyId: 'AKIABENCHBASELINE001', secretAccessKey: 'bench/baseline/secret/key/000000000000000' };
const ACTIVE = "('queued', 'dispatched', 'running')";

const log = (line = '') => process.stdout.write(`${line}\n`);
const progress = (line) => process.stderr.write(`bench-cloud: ${line}\n`);
const loadBefore = os.loadavg().map((l) => l.toFixed(2)).join(' ');
const codeAtStart = env.BENCH_E2E_CODE_VERSION || codeVersion(root);

const PITCREW_SERIES = 0xa0000000;
const BASELINE_SERIES = 0xb0000000;

// ---------------------------------------------------------------------------------------------
// The EC2 responder.
//
// It does NOT verify AWS Signature Version 4, keep instances or move them through states: the
// correctness of pitcrew's calls (signatures with the tenant's key, regions, errors, waits) is
// tested against test/support/ec2-emulator.ts, which does all that. This bench measures what the
// path costs, so the responder does as little as it can: it parses the form body the SDK sends
// (POST /, `Action=RebootInstances&Version=2016-11-15&InstanceId.1=i-…`), reads the access key
// from the Authorization header's Credential=, counts, and answers the XML the SDK parses (the
// same shapes as the emulator's: <return>true</return> for RebootInstances,
// reservationSet/item/instancesSet/item{instanceId, instanceState{code 16, name running}} for
// DescribeInstances).

async function startResponder() {
  /** Counts by action; by `${accessKeyId} ${action} ${instanceId}`; anything unexpected. */
  const stats = { byAction: {}, byCall: new Map(), byKey: {}, other: 0, requests: 0 };
  const answer = (res, status, xml) => {
    res.writeHead(status, { 'content-type': 'text/xml;charset=UTF-8', date: new Date().toUTCString(), 'x-amzn-requestid': randomUUID(), 'content-length': Buffer.byteLength(xml) });
    res.end(xml);
  };
  const server = http.createServer((req, res) => {
    const chunks = [];
    req.on('data', (chunk) => chunks.push(chunk));
    req.on('end', () => {
      stats.requests += 1;
      const params = new URLSearchParams(Buffer.concat(chunks).toString('utf8'));
      const action = params.get('Action') ?? '';
      const id = params.get('InstanceId.1') ?? '';
      const key = /Credential=([^/,\s]+)\//.exec(req.headers.authorization ?? '')?.[1] ?? '(none)';
      stats.byAction[action] = (stats.byAction[action] ?? 0) + 1;
      stats.byKey[key] = (stats.byKey[key] ?? 0) + 1;
      const callKey = `${key} ${action} ${id}`;
      stats.byCall.set(callKey, (stats.byCall.get(callKey) ?? 0) + 1);
      const requestId = randomUUID();
      if (action === 'RebootInstances' && id) {
        answer(res, 200, `<?xml version="1.0" encoding="UTF-8"?>\n<RebootInstancesResponse xmlns="${XMLNS}"><requestId>${requestId}</requestId><return>true</return></RebootInstancesResponse>`);
      } else if (action === 'DescribeInstances' && id) {
        answer(res, 200,
          `<?xml version="1.0" encoding="UTF-8"?>\n<DescribeInstancesResponse xmlns="${XMLNS}"><requestId>${requestId}</requestId><reservationSet>` +
          `<item><reservationId>r-${id.slice(2)}</reservationId><ownerId>123456789012</ownerId><groupSet/>` +
          `<instancesSet><item><instanceId>${id}</instanceId><imageId>ami-0123456789abcdef0</imageId><instanceState><code>16</code><name>running</name></instanceState>` +
          `<instanceType>t3.micro</instanceType><placement><availabilityZone>${REGION}a</availabilityZone><tenancy>default</tenancy></placement><tagSet/></item></instancesSet>` +
          `</item></reservationSet></DescribeInstancesResponse>`);
      } else {
        stats.other += 1;
        answer(res, 400, `<?xml version="1.0" encoding="UTF-8"?>\n<Response><Errors><Error><Code>InvalidAction</Code><Message>The bench responder answers RebootInstances and DescribeInstances of one instance only (got ${action || 'no action'})</Message></Error></Errors><RequestID>${requestId}</RequestID></Response>`);
      }
    });
  });
  /** How many calls of `action` on `id` with the access key `key`. */
  const calls = (key, action, id) => stats.byCall.get(`${key} ${action} ${id}`) ?? 0;
  return { url: await listenOnLoopback(server), stats, calls };
}

// ---------------------------------------------------------------------------------------------
// Measurements.

/** The server's CPU, this process's and the rest of the machine's over `fn`, in seconds, and the wall time. */
async function withCpu(pid, fn) {
  const c0 = { server: cpuSeconds(pid), own: ownCpuSeconds(), machine: machineProcessSeconds(), wall: performance.now() };
  const value = await fn();
  const seconds = Math.max(0.001, (performance.now() - c0.wall) / 1000);
  const server = pid ? cpuSeconds(pid) - c0.server : 0;
  const own = ownCpuSeconds() - c0.own;
  return { value, seconds, cpu: { server, own, other: Math.max(0, machineProcessSeconds() - c0.machine - server - own) } };
}

/** The API with the tenant's token; resolves with the parsed reply. */
function caller(base, token) {
  return async (method, url, body) => {
    const res = await fetch(`${base}${url}`, {
      method,
      headers: { authorization: `Bearer ${token}`, ...(body === undefined ? {} : { 'content-type': 'application/json' }) },
      body: body === undefined ? undefined : JSON.stringify(body),
      signal: AbortSignal.timeout(30_000),
    });
    const text = await res.text();
    if (!res.ok) throw new Error(`${method} ${url} → ${res.status}: ${text.slice(0, 300)}`);
    return text ? JSON.parse(text) : null;
  };
}

/** Every execution of the rule (GET /api/v1/executions?ruleId=…, pages of 1,000). */
async function executionsOf(call, ruleId) {
  const out = [];
  let cursor = null;
  do {
    const page = await call('GET', `/api/v1/executions?ruleId=${ruleId}&limit=1000${cursor ? `&cursor=${encodeURIComponent(cursor)}` : ''}`);
    out.push(...page.items);
    cursor = page.nextCursor;
  } while (cursor);
  return out;
}

/**
 * Posts one webhook per instance, `CONCURRENCY` in flight on keep-alive connections; then waits,
 * polling the storage (read-only, beside the server), until the rule has `expected` executions and
 * none is active. Resolves with each post's time and reply, and whether all ended in time.
 */
async function fire({ port, webhookPath, ids, reader, ruleId, expected, server }) {
  const agent = new http.Agent({ keepAlive: true, maxSockets: CONCURRENCY });
  onCleanup(() => agent.destroy());
  const posts = new Map();
  const post = (id) => new Promise((resolve) => {
    const body = JSON.stringify({ HostName: 'bench', AlarmName: 'instance_unreachable', InstanceId: id });
    const at = Date.now();
    const req = http.request({ agent, host: '127.0.0.1', port, path: webhookPath, method: 'POST', timeout: 30_000, headers: { 'content-type': 'application/json', 'content-length': Buffer.byteLength(body) } }, (res) => {
      let text = '';
      res.setEncoding('utf8');
      res.on('data', (chunk) => (text += chunk));
      res.on('end', () => {
        let json = null;
        try {
          json = JSON.parse(text);
        } catch {
          // not JSON
        }
        posts.set(id, { at, status: res.statusCode, json, text });
        resolve();
      });
    });
    req.on('timeout', () => req.destroy(new Error('no reply in 30 s')));
    req.once('error', (error) => {
      posts.set(id, { at, status: 0, json: null, text: error.message });
      resolve();
    });
    req.end(body);
  });
  const firstPost = Date.now();
  await inParallel(ids, CONCURRENCY, post);
  agent.destroy();
  const lastPost = Date.now();
  const deadline = lastPost + WAIT_SECONDS * 1000;
  const counts = async () => {
    const row = (await reader.all(`select count(*) as n, sum(case when state in ${ACTIVE} then 1 else 0 end) as pending from executions where rule_id = '${ruleId}'`))[0];
    return { n: Number(row.n), pending: Number(row.pending ?? 0) };
  };
  let c;
  for (;;) {
    if (!server.alive()) throw new Error(`the server exited:\n${server.output()}`);
    c = await counts();
    if (c.n >= expected && c.pending === 0) break;
    if (Date.now() > deadline) return { posts, firstPost, lastPost, complete: false, ...c };
    await sleep(20);
  }
  return { posts, firstPost, lastPost, complete: true, ...c };
}

/**
 * The bare SDK: the driver's calls per instance (EC2: RebootInstances then DescribeInstances),
 * `CONCURRENCY` at a time, with the shared client, or (BENCH_CLOUD_BASELINE_CLIENT=per-operation) a
 * client made for each instance and destroyed after it.
 */
async function baseline(driver, responder, shared, ids) {
  const results = new Map();
  await inParallel(ids, CONCURRENCY, async (id) => {
    const t0 = performance.now();
    const client = shared ?? driver.baselineClient(responder);
    try {
      const outcome = await client.run(id);
      results.set(id, { ms: performance.now() - t0, ...outcome });
    } catch (error) {
      results.set(id, { ms: performance.now() - t0, ok: false, error: error?.message ?? String(error) });
    } finally {
      if (client !== shared) client.destroy();
    }
  });
  return results;
}

/** EC2 through @aws-sdk/client-ec2: RebootInstances, then DescribeInstances until `running` (it is at once). */
const ec2Driver = {
  title: 'EC2 reboots',
  sdk: 'AWS SDK',
  calls: 'EC2 calls',
  distFile: 'dist/src/actions/cloud/aws.js',
  infrastructureType: 'CLOUD_EC2',
  action: { region: REGION },
  keys: { pitcrew: PITCREW_KEY.accessKeyId, baseline: BASELINE_KEY.accessKeyId },
  mutation: 'RebootInstances',
  reads: { DescribeInstances: 1 },
  /** The n-th instance id of a series (i- and 8 hex digits); pitcrew and the baseline use other series. */
  instanceId: (series, n) => `i-${(series + n).toString(16).padStart(8, '0')}`,
  vmOf: (id) => id,
  start: startResponder,
  pitcrewEnv: (responder) => ({ PITCREW_AWS_ENDPOINT_URL: responder.url }),
  credential: () => ({ name: 'bench aws', provider: 'aws', secret: PITCREW_KEY }),
  baselineClient: (responder) => {
    const client = new EC2Client({ region: REGION, endpoint: responder.url, credentials: BASELINE_KEY });
    return {
      async run(id) {
        await client.send(new RebootInstancesCommand({ InstanceIds: [id] }));
        const answer = await client.send(new DescribeInstancesCommand({ InstanceIds: [id] }));
        const state = answer.Reservations?.[0]?.Instances?.[0]?.State?.Name;
        return { ok: state === 'running', error: state === 'running' ? null : `state ${state}` };
      },
      destroy: () => client.destroy(),
    };
  },
  describeResponder: (responder) => `a minimal Query API responder in this process on ${responder.url} (no SigV4 check; always running); PITCREW_AWS_ENDPOINT_URL`,
  describeRule: () => `webhook rule, action cloud reboot in ${REGION}, instances from the payload`,
  describeBaseline: (perOperation) => `${perOperation ? 'a new EC2Client per instance (BENCH_CLOUD_BASELINE_CLIENT=per-operation)' : 'one EC2Client'} (@aws-sdk/client-ec2) in this process: RebootInstances then DescribeInstances per instance`,
};

/** The driver of BENCH_CLOUD_PROVIDER; Azure's and Google's SDKs are loaded only for theirs. */
async function driverOf(provider) {
  if (provider === 'aws') return ec2Driver;
  if (provider === 'azure') return (await import('./cloud-azure.js')).azureDriver;
  if (provider === 'gcp') return (await import('./cloud-gcp.js')).gcpDriver;
  throw new Error(`BENCH_CLOUD_PROVIDER must be aws, azure or gcp, got "${provider}"`);
}

const stats = (values) => {
  const sorted = [...values].sort((a, b) => a - b);
  return { n: sorted.length, p50: percentile(sorted, 0.5), p99: percentile(sorted, 0.99), max: sorted[sorted.length - 1] };
};

async function main() {
  const startedAt = Date.now();
  const driver = await driverOf(PROVIDER);
  if (!fs.existsSync(path.join(root, driver.distFile))) throw new Error('dist/ is not built, or predates the cloud actions: run npx tsc -p tsconfig.build.json (or npm run build) first');
  const responder = await driver.start();
  progress(`${driver.calls.split(' ')[0]} responder on ${responder.url}`);
  const pc = await startPitcrew({ root, env: { ...env, ...driver.pitcrewEnv(responder) }, tempPrefix: 'pitcrew-bench-cloud-', ruleName: 'bench webhook (unused)', progress });
  const { server, base, port, apiKey, token, storage } = pc;
  const call = caller(base, token);
  // The tenant's throttle is raised by startPitcrew (10,000,000/s), so no webhook is answered 429.
  const credential = await call('POST', '/api/v1/credentials', driver.credential());
  const rule = await call('POST', '/api/v1/rules', {
    name: 'bench reboot',
    trigger: { type: 'webhook' },
    action: { type: 'cloud', operation: 'reboot', ...driver.action, credentialId: credential.id, instances: { from: 'payload' } },
    target: { type: 'trigger_host' },
    infrastructureType: driver.infrastructureType,
  });
  const webhookPath = `/api/v1/trigger/channel/webhook/${apiKey}/${rule.trigger.triggerId}`;
  const reader = await storage.openReader();
  if (!['shared', 'per-operation'].includes(BASELINE_CLIENT)) throw new Error(`BENCH_CLOUD_BASELINE_CLIENT must be shared or per-operation, got "${BASELINE_CLIENT}"`);
  const client = BASELINE_CLIENT === 'shared' ? driver.baselineClient(responder) : null;
  onCleanup(() => client?.destroy());

  const pitcrewIds = Array.from({ length: WARMUP + EVENTS }, (_, i) => driver.instanceId(PITCREW_SERIES, i));
  const baselineIds = Array.from({ length: WARMUP + EVENTS }, (_, i) => driver.instanceId(BASELINE_SERIES, i));
  const warm = { pitcrew: pitcrewIds.slice(0, WARMUP), baseline: baselineIds.slice(0, WARMUP) };
  const measured = { pitcrew: pitcrewIds.slice(WARMUP), baseline: baselineIds.slice(WARMUP) };

  // Warm-up (JIT, the SDK's first client, connections), not in the figures: both paths.
  let warmRun = null;
  if (WARMUP > 0) {
    progress(`warm-up: ${WARMUP} webhooks, then ${WARMUP} bare SDK operations`);
    warmRun = await fire({ port, webhookPath, ids: warm.pitcrew, reader, ruleId: rule.id, expected: WARMUP, server });
    if (!warmRun.complete) throw new Error(`the warm-up's ${WARMUP} executions did not all end within ${WAIT_SECONDS} s: ${warmRun.n} made, ${warmRun.pending} still active`);
    await baseline(driver, responder, client, warm.baseline);
    await sleep(500);
  }

  progress(`pitcrew: ${fmtInt(EVENTS)} webhooks, ${CONCURRENCY} at a time, until every execution ended`);
  const p = await withCpu(server.pid, () => fire({ port, webhookPath, ids: measured.pitcrew, reader, ruleId: rule.id, expected: WARMUP + EVENTS, server }));
  await sleep(SETTLE_MS);
  progress(`baseline: ${fmtInt(EVENTS)} operations with the bare SDK, ${CONCURRENCY} at a time`);
  const b = await withCpu(server.pid, () => baseline(driver, responder, client, measured.baseline));
  await sleep(SETTLE_MS);

  progress('reading the executions back (GET /api/v1/executions?ruleId=…)');
  const executions = await executionsOf(call, rule.id);
  const transitions = await reader.all(
    `select t.execution_id as id, t.from_state as f, t.to_state as t, count(*) as n from execution_transitions t join executions e on e.id = t.execution_id where e.rule_id = '${rule.id}' group by t.execution_id, t.from_state, t.to_state`,
  );
  const otherExecutions = Number((await reader.all(`select count(*) as n from executions where rule_id <> '${rule.id}'`))[0].n);
  await reader.close();
  const stopped = await server.stop(30_000);

  return report({ driver, storage, responder, rule, executions, transitions, otherExecutions, warmRun, p, b, measured, pitcrewIds, baselineIds, stopped, seconds: (Date.now() - startedAt) / 1000 });
}

// ---------------------------------------------------------------------------------------------
// Output

function report(r) {
  const { driver, responder, p, b } = r;
  const run = p.value;
  const measuredSet = new Set(r.measured.pitcrew);
  const byInstance = new Map();
  for (const e of r.executions) byInstance.set(e.hostname, [...(byInstance.get(e.hostname) ?? []), e]);
  const mine = r.executions.filter((e) => measuredSet.has(e.hostname));
  const t = (iso) => (iso ? Date.parse(iso) : NaN);
  const lastFinished = Math.max(...mine.map((e) => t(e.finishedAt)));
  const pitcrewSeconds = (lastFinished - run.firstPost) / 1000;
  const pitcrewRate = EVENTS / pitcrewSeconds;
  const postAt = (e) => run.posts.get(e.hostname)?.at ?? NaN;
  const total = stats(mine.map((e) => t(e.finishedAt) - postAt(e)));
  const stage = {
    queued: stats(mine.map((e) => t(e.queuedAt) - postAt(e))),
    dispatched: stats(mine.map((e) => t(e.dispatchedAt) - t(e.queuedAt))),
    started: stats(mine.map((e) => t(e.startedAt) - t(e.dispatchedAt))),
    calls: stats(mine.map((e) => t(e.finishedAt) - t(e.startedAt))),
  };
  const base = [...b.value.values()];
  const baseOk = base.filter((x) => x.ok).length;
  const baseRate = EVENTS / b.seconds;
  const baseLat = stats(base.map((x) => x.ms));
  const callNames = [driver.mutation, ...Object.keys(driver.reads)];
  const callsOf = (key, ids) => ids.reduce((sum, id) => sum + callNames.reduce((n, action) => n + responder.calls(key, action, driver.vmOf(id)), 0), 0);
  const pitcrewCalls = callsOf(driver.keys.pitcrew, r.measured.pitcrew);
  const baselineCalls = callsOf(driver.keys.baseline, r.measured.baseline);
  const us = (seconds, n) => `${fmtInt((seconds / n) * 1e6)} µs`;
  const ms = (n) => (Number.isFinite(n) ? fmtInt(n) : 'n/a');
  const msDec = (n) => (Number.isFinite(n) ? n.toFixed(1) : 'n/a');
  const x = (a, c) => (Number.isFinite(a) && Number.isFinite(c) && c > 0 ? `${(a / c).toFixed(2)} ×` : '');
  const cpu = os.cpus();

  log();
  log(`pitcrew cloud action benchmark: ${fmtInt(EVENTS)} ${driver.title} run by the service, beside the bare ${driver.sdk}`);
  log(`  storage      ${r.storage.describe}`);
  log(`  machine      ${cpu.length} × ${cpu[0]?.model ?? 'unknown CPU'}, ${os.platform()} ${os.release()}, node ${process.version}`);
  log(`  code         ${codeAtStart} (at the start); load average before the run ${loadBefore}`);
  log(`  ${driver.calls.split(' ')[0].padEnd(12)} ${driver.describeResponder(responder)}`);
  log(`  pitcrew      ${driver.describeRule()}; ${fmtInt(EVENTS)} webhooks (one InstanceId each), ${CONCURRENCY} in flight, keep-alive`);
  log(`  baseline     ${driver.describeBaseline(BASELINE_CLIENT !== 'shared')}, ${CONCURRENCY} at a time`);
  log(`  warm-up      ${fmtInt(WARMUP)} of each before, not in the figures`);
  log();
  const rows = [
    ['figure', '', 'pitcrew', 'bare SDK', 'pitcrew / bare'],
    ['executions/s | operations/s', '', msDec(pitcrewRate), msDec(baseRate), fmtPct(pitcrewRate / baseRate)],
    ['  count, seconds', '', `${fmtInt(EVENTS)}, ${pitcrewSeconds.toFixed(2)}`, `${fmtInt(EVENTS)}, ${b.seconds.toFixed(2)}`, ''],
    ['webhook → finished | operation', 'p50 ms', ms(total.p50), msDec(baseLat.p50), x(total.p50, baseLat.p50)],
    ['', 'p99 ms', ms(total.p99), msDec(baseLat.p99), x(total.p99, baseLat.p99)],
    ['  webhook sent → queued', 'p50 / p99 ms', `${ms(stage.queued.p50)} / ${ms(stage.queued.p99)}`, '', ''],
    ['  queued → dispatched', 'p50 / p99 ms', `${ms(stage.dispatched.p50)} / ${ms(stage.dispatched.p99)}`, '', ''],
    ['  dispatched → running', 'p50 / p99 ms', `${ms(stage.started.p50)} / ${ms(stage.started.p99)}`, '', ''],
    [`  running → finished (${driver.calls})`, 'p50 / p99 ms', `${ms(stage.calls.p50)} / ${ms(stage.calls.p99)}`, `${msDec(baseLat.p50)} / ${msDec(baseLat.p99)}`, x(stage.calls.p50, baseLat.p50)],
    [`${driver.calls} per execution | op`, '', (pitcrewCalls / EVENTS).toFixed(2), (baselineCalls / EVENTS).toFixed(2), ''],
    ['CPU per execution | op', 'server', us(p.cpu.server, EVENTS), `(idle) ${us(b.cpu.server, EVENTS)}`, ''],
    ['', 'bench', us(p.cpu.own, EVENTS), us(b.cpu.own, EVENTS), ''],
    ['', 'total', us(p.cpu.server + p.cpu.own, EVENTS), us(b.cpu.own, EVENTS), x(p.cpu.server + p.cpu.own, b.cpu.own)],
    ['CPU share of one core', 'server, bench', `${fmtPct(p.cpu.server / p.seconds)}, ${fmtPct(p.cpu.own / p.seconds)}`, `${fmtPct(b.cpu.server / b.seconds)}, ${fmtPct(b.cpu.own / b.seconds)}`, ''],
    ['', 'other procs', fmtPct(p.cpu.other / p.seconds), fmtPct(b.cpu.other / b.seconds), ''],
  ];
  log(table(rows));
  log('  executions/s: R ÷ (last finishedAt − first webhook sent); operations/s: R ÷ the baseline run\'s wall time.');
  log('  webhook → finished: finishedAt (server clock) − the time this process sent that webhook (same machine clock), whole ms;');
  log(`       the rows under it split it by the execution's queuedAt, dispatchedAt, startedAt. operation: ${callNames.join(' + ')}, one instance.`);
  log(`  CPU: seconds used during the run ÷ R. bench = this process: the webhook client or the SDK, and the ${driver.calls.split(' ')[0]} responder in both;`);
  log('       total: server + bench for pitcrew, bench alone for the baseline (pitcrew only idles beside it: its "(idle)" figure).');
  log('       other procs above a few % means something else ran on the machine and disturbed the run.');
  log();

  // Verification: every webhook 202 with one execution; every execution of the rule succeeded,
  // once per instance, with each transition once; each instance rebooted once, its state read as
  // the driver expects (EC2: described once).
  const statuses = {};
  let oneExecution = 0;
  const allPosts = [...(r.warmRun?.posts.values() ?? []), ...run.posts.values()];
  for (const post of allPosts) {
    statuses[post.status] = (statuses[post.status] ?? 0) + 1;
    if (post.status === 202 && (post.json?.executionCount ?? post.json?.executionIds?.length) === 1) oneExecution += 1;
  }
  const expected = r.pitcrewIds.length;
  const states = {};
  for (const e of r.executions) states[e.state] = (states[e.state] ?? 0) + 1;
  const perInstance = r.pitcrewIds.map((id) => (byInstance.get(id) ?? []).length);
  const known = new Set(r.pitcrewIds);
  const strangers = r.executions.filter((e) => !known.has(e.hostname)).length;
  const path4 = ['null>queued', 'queued>dispatched', 'dispatched>running', 'running>succeeded'];
  const transitionsOf = new Map();
  for (const row of r.transitions) {
    const list = transitionsOf.get(row.id) ?? [];
    list.push({ key: `${row.f ?? 'null'}>${row.t}`, n: Number(row.n) });
    transitionsOf.set(row.id, list);
  }
  const straightPath = r.executions.filter((e) => {
    const list = transitionsOf.get(e.id) ?? [];
    return list.length === path4.length && list.every((tr) => tr.n === 1 && path4.includes(tr.key));
  }).length;
  const reboots = r.pitcrewIds.map((id) => responder.calls(driver.keys.pitcrew, driver.mutation, driver.vmOf(id)));
  const readsAsExpected = r.pitcrewIds.filter((id) => Object.entries(driver.reads).every(([action, n]) => responder.calls(driver.keys.pitcrew, action, driver.vmOf(id)) === n)).length;
  const baseReboots = r.baselineIds.map((id) => responder.calls(driver.keys.baseline, driver.mutation, driver.vmOf(id)));
  const count = (list, pred) => list.filter(pred).length;
  const failedReasons = [...new Set(r.executions.filter((e) => e.state !== 'succeeded').map((e) => `${e.state}: ${e.reason}`))].slice(0, 3);
  const baseErrors = [...new Set(base.filter((x2) => !x2.ok).map((x2) => x2.error))].slice(0, 3);

  log('verification');
  log(`  webhooks: ${fmtInt(allPosts.length)} posted (warm-up included), statuses ${JSON.stringify(statuses)}, answered 202 with one execution ${fmtInt(oneExecution)}`);
  log(`  executions of the rule ${fmtInt(r.executions.length)} (expected ${fmtInt(expected)}), states ${JSON.stringify(states)}; instances with 0 / 1 / more executions ${count(perInstance, (n) => n === 0)} / ${count(perInstance, (n) => n === 1)} / ${count(perInstance, (n) => n > 1)}; for unknown instances ${strangers}; other executions ${r.otherExecutions}`);
  log(`  transitions: queued → dispatched → running → succeeded, each exactly once, for ${fmtInt(straightPath)} of ${fmtInt(r.executions.length)} executions`);
  const readWords = Object.entries(driver.reads).map(([action, n]) => `${action} × ${n}`).join(', ');
  log(`  ${driver.calls.split(' ')[0]} (pitcrew's key): instances rebooted 0 / 1 / more times ${count(reboots, (n) => n === 0)} / ${count(reboots, (n) => n === 1)} / ${count(reboots, (n) => n > 1)}; read exactly ${readWords}: ${fmtInt(readsAsExpected)} of ${fmtInt(r.pitcrewIds.length)}`);
  log(`  ${driver.calls.split(' ')[0]} requests by action ${JSON.stringify(responder.stats.byAction)}, by key ${JSON.stringify(responder.stats.byKey)}, unanswerable ${responder.stats.other}`);
  log(`  baseline: ${fmtInt(baseOk)} of ${fmtInt(EVENTS)} operations saw running; instances rebooted once ${count(baseReboots, (n) => n === 1)} of ${fmtInt(r.baselineIds.length)}; server exit ${r.stopped.code ?? r.stopped.signal}`);
  for (const reason of failedReasons) log(`  not succeeded: ${reason}`);
  for (const error of baseErrors) log(`  baseline error: ${error}`);
  const checks = [
    [run.complete && (r.warmRun?.complete ?? true), `every execution ended within ${WAIT_SECONDS} s of the last webhook`],
    [statuses[202] === allPosts.length && oneExecution === allPosts.length, 'every webhook answered 202 with one execution'],
    [r.executions.length === expected && (states.succeeded ?? 0) === expected, 'every execution succeeded'],
    [count(perInstance, (n) => n === 1) === expected && strangers === 0 && r.otherExecutions === 0, 'one execution per instance, no other execution'],
    [straightPath === expected, 'no execution moved twice (each transition once)'],
    [count(reboots, (n) => n === 1) === expected && readsAsExpected === expected, `each instance rebooted once and read ${readWords} by pitcrew`],
    [baseOk === EVENTS && count(baseReboots, (n) => n === 1) === r.baselineIds.length, 'every baseline operation succeeded, each instance rebooted once'],
    [responder.stats.other === 0, 'no request the responder could not answer'],
  ];
  for (const [ok, what] of checks) if (!ok) log(`  FAILED: ${what}`);
  const ok = checks.every(([pass]) => pass);
  if (ok) log(`  OK: ${fmtInt(expected)} executions, each succeeded once, each instance rebooted once; ${fmtInt(r.baselineIds.length)} bare SDK operations`);
  log();
  log(`done in ${r.seconds.toFixed(0)} s`);
  return ok;
}

runBench(main, BUDGET_SECONDS, progress);
