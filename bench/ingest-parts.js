// CPU time per call of the per-request parts of the webhook ingest, in this checkout's dist/ against
// another build's (issue 41 item 4): the figures hold on a loaded machine, since they are the
// process's own CPU time, and each part is the median of 5 rounds, the two builds alternating.
//
//   git worktree add --detach ../base main && ln -s "$PWD/node_modules" ../base/ && (cd ../base && npx tsc -p tsconfig.build.json)
//   node bench/ingest-parts.js ../base
import path from 'node:path';
import { pathToFileURL } from 'node:url';
import { Histogram, Registry } from 'prom-client';

const basePath = process.argv[2];
if (!basePath) {
  console.error('usage: node bench/ingest-parts.js <checkout with the base build in dist/>');
  process.exit(2);
}
const load = (root, file) => import(pathToFileURL(path.resolve(root, 'dist/src', file)).href);
const builds = { base: path.resolve(basePath), this: path.resolve(import.meta.dirname, '..') };

const BOUNDS = [0.0005, 0.001, 0.0025, 0.005, 0.01, 0.025, 0.05, 0.1, 0.25, 0.5, 1, 2.5];
const ROUTE = '/api/v1/trigger/channel/webhook/:apiKey/:triggerId';
const BODY = '{"HostName":"web-1","AlarmName":"disk_full","Severity":"critical","Act":true,"MetaData":{"Key1":"Value1"}}';

async function partsOf(root) {
  const [ids, decide, alarm, payload] = await Promise.all(['store/ids.js', 'engine/decide.js', 'incidents/webhook-alarm.js', 'ingress/payload.js'].map((f) => load(root, f)));
  const metrics = await load(root, 'metrics/request-durations.js').catch(() => undefined);
  const observe = metrics
    ? ((d) => () => d.observe('POST', ROUTE, 202, 0.0123))(new metrics.RequestDurations('x', 'x', BOUNDS, new Registry()))
    : ((h) => () => h.observe({ method: 'POST', route: ROUTE, status: 202 }, 0.0123))(new Histogram({ name: 'x', help: 'x', labelNames: ['method', 'route', 'status'], buckets: BOUNDS, registers: [new Registry()] }));
  let at = Date.now();
  let calls = 0;
  return {
    'request histogram': observe,
    // ~30 ids per millisecond, as at the bench's rates with one event per call.
    newId: () => ids.newId((calls += 1) % 30 === 0 ? (at += 1) : at),
    hostKey: () => decide.hostKey('web-1'),
    webhookIncidentKey: () => alarm.webhookIncidentKey('disk_full', 'web-1'),
    'JSON.parse + parseAlertPayload': () => payload.parseAlertPayload(JSON.parse(BODY)),
  };
}

const N = 200_000;
const parts = { base: await partsOf(builds.base), this: await partsOf(builds.this) };
const ns = {};
for (let round = 0; round < 5; round += 1) {
  for (const build of ['base', 'this']) {
    for (const [name, call] of Object.entries(parts[build])) {
      const before = process.cpuUsage();
      for (let i = 0; i < N; i += 1) call();
      const used = process.cpuUsage(before);
      ((ns[name] ??= { base: [], this: [] })[build]).push(((used.user + used.system) * 1000) / N);
    }
  }
}
const median = (values) => [...values].sort((a, b) => a - b)[Math.floor(values.length / 2)];
console.log(`${'part'.padEnd(32)} ${'base ns'.padStart(8)} ${'this ns'.padStart(8)}`);
for (const [name, { base, this: mine }] of Object.entries(ns)) {
  console.log(`${name.padEnd(32)} ${median(base).toFixed(0).padStart(8)} ${median(mine).toFixed(0).padStart(8)}`);
}
