// The durable floor of the ingest benchmark: bench/bare-server.js's route plus what pitcrew cannot
// do without, storing each accepted event durably before replying. SQLite in WAL with pitcrew's
// settings (src/store/database.ts, src/store/durability.ts): synchronous=FULL by default, NORMAL
// around the group commit, the WAL then synced with fdatasync on libuv's thread pool. All the
// requests of one event-loop turn share one transaction (setImmediate, as src/store/group-commit.ts),
// the next one runs while the previous is synced, and each reply waits for its commit's sync.
// The table has the columns and indexes of pitcrew's `events` as its migrations leave it, minus the
// foreign keys (no tenants or rules here); each row carries the body as pitcrew stores it (payload,
// env of its scalars, skipped_env). No auth, no rules, no incidents, no logging.
//
// Started by bench/run.js as a child process: PORT selects the port (127.0.0.1 only), DATA_DIR the
// directory for the database; it prints {"ready":true,"port":N} once it listens and exits on
// SIGTERM/SIGINT after its last commit is synced.
import fs from 'node:fs';
import path from 'node:path';
import Database from 'better-sqlite3';
import Fastify from 'fastify';
// pitcrew's time-ordered ids (UUIDv7): random ones would scatter the inserts over the primary key's b-tree.
import { newId } from '../dist/src/store/ids.js';

const port = Number(process.env.PORT ?? 0);
const dataDir = process.env.DATA_DIR;
if (!dataDir) throw new Error('DATA_DIR must name a directory for the database');
fs.mkdirSync(dataDir, { recursive: true });
const file = path.join(dataDir, 'floor.db');

const db = new Database(file);
db.pragma('journal_mode = WAL');
db.pragma('synchronous = FULL');
db.exec(`create table if not exists events (
  id text primary key, tenant_id text not null, rule_id text not null, api_key_id text, outcome text not null, reason text,
  received_at bigint not null, source_ip text, payload text not null, env text not null, skipped_env text not null,
  host_key text default '' not null, alarm_state text, state_changed integer default 0 not null, idempotency_key text,
  source text default 'webhook' not null, requested_by text, incident_id text, incident_previous_id text)`);
db.exec('create index if not exists events_rule on events (rule_id, id)');
db.exec('create index if not exists events_rule_host on events (rule_id, host_key, received_at)');
db.exec('create index if not exists events_rule_host_changes on events (rule_id, host_key, received_at) where state_changed = 1');

const relax = db.prepare('pragma synchronous = NORMAL');
const restore = db.prepare('pragma synchronous = FULL');
const begin = db.prepare('begin');
const commit = db.prepare('commit');
const insert = db.prepare(`insert into events (id, tenant_id, rule_id, api_key_id, outcome, reason, received_at, source_ip, payload, env, skipped_env, host_key, alarm_state, state_changed, idempotency_key, source)
  values (?, ?, ?, ?, 'accepted', null, ?, ?, ?, ?, '[]', ?, null, 0, null, 'webhook')`);

let walFd;
const syncWal = () => new Promise((resolve, reject) => {
  walFd ??= fs.openSync(`${file}-wal`, 'r');
  fs.fdatasync(walFd, (error) => (error ? reject(error) : resolve()));
});

/** The requests of this turn: committed together on the next setImmediate. */
let pending = [];
let scheduled = false;
const syncing = new Set();

function commitPending() {
  scheduled = false;
  const batch = pending;
  pending = [];
  try {
    relax.run();
    begin.run();
    for (const e of batch) insert.run(e.id, e.tenantId, e.ruleId, e.keyId, e.receivedAt, e.ip, e.payload, e.env, e.hostKey);
    commit.run();
    restore.run();
  } catch (error) {
    if (db.inTransaction) db.exec('rollback');
    restore.run();
    for (const e of batch) e.reject(error);
    return;
  }
  const synced = syncWal().then(() => batch.forEach((e) => e.resolve()), (error) => batch.forEach((e) => e.reject(error)));
  syncing.add(synced);
  void synced.finally(() => syncing.delete(synced));
}

function store(event) {
  return new Promise((resolve, reject) => {
    pending.push({ ...event, resolve, reject });
    if (!scheduled) {
      scheduled = true;
      setImmediate(commitPending);
    }
  });
}

/** The runbook's environment as pitcrew derives it, in short: the body's scalars and MetaData's. */
function scalarsOf(body) {
  const env = {};
  for (const [name, value] of Object.entries(body)) if (value === null || typeof value !== 'object') env[name] = String(value ?? '');
  if (body.MetaData && typeof body.MetaData === 'object') for (const [name, value] of Object.entries(body.MetaData)) env[name] = String(value ?? '');
  return env;
}

const app = Fastify({ logger: false });

app.post('/api/v1/trigger/channel/webhook/:apiKey/:triggerId', async (request, reply) => {
  const body = request.body;
  if (body === null || typeof body !== 'object') return reply.code(400).send({ error: 'body must be a JSON object' });
  const receivedAt = Date.now();
  const eventId = newId(receivedAt);
  const hostname = typeof body.HostName === 'string' ? body.HostName : '';
  await store({
    id: eventId, tenantId: 'bench', ruleId: request.params.triggerId, keyId: 'bench', receivedAt, ip: request.ip,
    payload: JSON.stringify(body), env: JSON.stringify(scalarsOf(body)), hostKey: hostname.toLowerCase(),
  });
  return reply
    .code(202)
    .header('Location', `/api/v1/events/${eventId}`)
    .send({ eventId, outcome: 'accepted', reason: null, executionIds: [], skippedEnv: [] });
});

const stop = () => {
  app.close()
    .then(() => Promise.allSettled([...syncing]))
    .then(() => db.close())
    .then(() => process.exit(0), () => process.exit(1));
};
process.once('SIGTERM', stop);
process.once('SIGINT', stop);

await app.listen({ host: '127.0.0.1', port });
process.stdout.write(`${JSON.stringify({ ready: true, port: app.server.address().port })}\n`);
