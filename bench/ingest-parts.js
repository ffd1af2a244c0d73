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
const BATCH = 37;
const BODY = '{"HostName":"web-1","AlarmName":"disk_full","Severity":"critical","Act":true,"MetaData":{"Key1":"Value1"}}';

async function partsOf(root) {
  const [ids, decide, alarm, payload, statements] = await Promise.all(['store/ids.js', 'engine/decide.js', 'incidents/webhook-alarm.js', 'ingress/payload.js', 'store/statements.js'].map((f) => load(root, f)));
  const sqlite = new statements.Statements('sqlite');
  // A group commit's events as the bench's calls make them (~37 a batch), per row.
  const batch = Array.from({ length: BATCH }, () => eventRow(ids.newId(Date.now())));
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
    // Per event: the batch's insert divided by its rows (run once every BATCH calls).
    'events insert (per row)': () => (calls += 1) % BATCH === 0 && sqlite.inserts('events', batch),
    'placeholder list (per batch, 5)': () => (calls += 1) % BATCH === 0 && [1, 1, 2, 1, 3].map((n, i) => sqlite.list(n, i)),
  };
}

const N = 200_000;

function eventRow(id) {
  const incident = '0190aaaa-0000-7000-8000-000000000000';
  return {
    id, tenant_id: '0190aaaa-0000-7000-8000-00000000000a', rule_id: '0190aaaa-0000-7000-8000-00000000000b', api_key_id: '0190aaaa-0000-7000-8000-00000000000c',
    outcome: 'no_target', reason: 'no host named "web-1" has an agent in this tenant', received_at: Date.now(), source: 'webhook', requested_by: undefined,
    source_ip: '127.0.0.1', payload: BODY, env: '{"HostName":"web-1","AlarmName":"disk_full","Severity":"critical","Act":"true","Key1":"Value1"}', skipped_env: '[]',
    host_key: 'web-1', alarm_state: null, state_changed: 0, idempotency_key: null, incident_id: incident, incident_previous_id: id,
  };
}
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
