import { randomBytes } from 'node:crypto';
import fs from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { sql } from 'kysely';
import pg from 'pg';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { MIGRATION_NAMES, recordedMigrations } from '../src/store/migrations.js';
import { spawnAgent, waitOnline, type AgentProcess } from './support/agents.js';
import { startBalancer, type Balancer } from './support/balancer.js';
import { createTestDatabase, testDialects, type TestDatabase } from './support/databases.js';
import { breaksPreviousRelease } from './support/migration-compat.js';
import { buildPreviousRelease, type PreviousBuild } from './support/previous-release.js';
import { runCli, startServer, type ServerProcess } from './support/process.js';
import { scriptRule } from './support/app.js';
import { waitFor } from './support/wait.js';

const MIGRATIONS_DIR = path.resolve(import.meta.dirname, '../src/store/migrations');
/** The advisory lock Kysely's migrator takes on PostgreSQL (LOCK_ID in kysely's postgres-adapter.js). */
const MIGRATION_LOCK_ID = '3853314791062309107';

/** The migrations this tree adds to the previous release's: what the first new node runs. */
const added = (previous: PreviousBuild) => MIGRATION_NAMES.filter((name) => !previous.migrations.includes(name));

let previous: PreviousBuild;
// Built once per machine and commit (minutes on a busy machine), reused by later runs.
beforeAll(async () => {
  previous = await buildPreviousRelease();
}, 900_000);

describe('the rule that keeps the previous release running on the new schema', () => {
  it.each([
    ['export async function up(db) { await db.schema.alterTable("hosts").dropColumn("os").execute(); }', ['drops a column']],
    ['export async function up(db) { await sql`alter table hosts rename column os to system`.execute(db); }', ['renames a table or column']],
    ["export async function up(db) { await db.schema.alterTable('hosts').addColumn('zone', 'text', (c) => c.notNull()).execute(); }", [expect.stringMatching(/NOT NULL column without a default/)]],
    ["export async function up(db) { await db.schema.alterTable('hosts').addColumn('zone', 'text', (c) => c.notNull().defaultTo('')).execute(); }", []],
    ["export async function up(db) { await db.schema.alterTable('hosts').addColumn('zone', 'text').execute(); }", []],
    ["export async function up(db) { await db.schema.createTable('zones').execute(); }\nexport async function down(db) { await db.schema.dropTable('zones').execute(); }", []],
    // A new table's NOT NULL columns: the previous release never writes that table. A column added beside it still counts.
    ["export async function up(db) { await db.schema.createTable('zones').addColumn('id', 'text', (c) => c.primaryKey()).addColumn('name', 'text', (c) => c.notNull()).execute(); }", []],
    ["export async function up(db) { await db.schema.createTable('zones').addColumn('name', 'text', (c) => c.notNull()).execute();\n await db.schema.alterTable('hosts').addColumn('zone', 'text', (c) => c.notNull()).execute(); }", [expect.stringMatching(/NOT NULL column without a default: .addColumn\('zone'/)]],
  ])('%s', (source, found) => {
    expect(breaksPreviousRelease(source)).toEqual(found);
  });

  it("holds for every migration added since the previous release, which is a prefix of this tree's", () => {
    // Forward-only: a release never removes, renames or reorders a migration the previous one ran.
    expect(MIGRATION_NAMES.slice(0, previous.migrations.length)).toEqual(previous.migrations);
    for (const name of added(previous)) {
      expect(breaksPreviousRelease(fs.readFileSync(path.join(MIGRATIONS_DIR, `${name}.ts`), 'utf8')), name).toEqual([]);
    }
  });
});

/** What a node logged it applied at start ("storage ready"). */
function appliedAtStart(server: ServerProcess): string[] {
  const line = server.output().split('\n').find((text) => text.includes('"storage ready"'));
  if (!line) throw new Error(`no "storage ready" line in:\n${server.output()}`);
  return (JSON.parse(line) as { applied: string[] }).applied;
}

// Issue 40: nodes of release N-1 and N serve side by side on one PostgreSQL during a rolling
// upgrade, their agents (still of release N-1) behind a load balancer; no event is lost or run twice.
describe.skipIf(!testDialects().includes('postgres'))('a rolling upgrade from the previous release on PostgreSQL', () => {
  let database: TestDatabase;
  let balancer: Balancer;
  const dirs: string[] = [];
  const nodes = new Map<string, ServerProcess>();
  const agents: AgentProcess[] = [];
  let env: Record<string, string>;
  let tenant: { apiKey: string; token: string };
  let ledger: string;
  let triggerId: string;
  let ruleId: string;
  const fired: Array<{ mark: string; eventId: string; executionId: string }> = [];

  const tempDir = () => {
    const dir = fs.mkdtempSync(path.join(os.tmpdir(), 'pitcrew-upgrade-'));
    dirs.push(dir);
    return dir;
  };
  const start = async (name: string, dataDir: string, bin?: string) => {
    const server = await startServer({ ...env, PITCREW_DATA_DIR: dataDir }, { bin });
    nodes.set(name, server);
    return server;
  };
  const node = (name: string) => nodes.get(name)!;
  const api = async (server: ServerProcess, method: string, url: string, body?: unknown) => {
    const response = await fetch(`${server.url}${url}`, {
      method,
      headers: { authorization: `Bearer ${tenant.token}`, ...(body ? { 'content-type': 'application/json' } : {}) },
      body: body ? JSON.stringify(body) : undefined,
    });
    return { status: response.status, body: await response.json() as Record<string, unknown> };
  };
  const online = (server: ServerProcess, hostname: string) => waitOnline(async (method, url) => {
    const { status, body } = await api(server, method, url);
    return { statusCode: status, json: () => body };
  }, hostname, 60_000);
  /** A webhook through `server` for the agent of `hostname`; its run appends the mark to the ledger. */
  const fire = async (server: ServerProcess, hostname: string) => {
    const mark = `m${fired.length}-${randomBytes(3).toString('hex')}`;
    const response = await fetch(`${server.url}/api/v1/trigger/channel/webhook/${tenant.apiKey}/${triggerId}`, {
      method: 'POST', headers: { 'content-type': 'application/json' }, body: JSON.stringify({ HostName: hostname, Mark: mark }),
    });
    const reply = await response.json() as { eventId: string; outcome: string; executionIds: string[] };
    expect(response.status, JSON.stringify(reply)).toBe(202);
    expect(reply).toMatchObject({ outcome: 'accepted', executionIds: [expect.any(String)] });
    fired.push({ mark, eventId: reply.eventId, executionId: reply.executionIds[0]! });
  };
  /** Every event fired so far ran exactly once (the ledger its runs append to), with one execution each. */
  const expectEachRanOnce = async (reader: ServerProcess) => {
    for (const { executionId } of fired) {
      await waitFor(async () => (await api(reader, 'GET', `/api/v1/executions/${executionId}`)).body.state === 'succeeded', `execution ${executionId} to succeed`, 60_000);
    }
    const ran = fs.readFileSync(ledger, 'utf8').split('\n').filter(Boolean).sort();
    expect(ran).toEqual(fired.map((f) => f.mark).sort());
    const store = database.open();
    try {
      const rows = await sql<{ event_id: string; n: number }>`select event_id, count(*)::int as n from executions where rule_id = ${ruleId} group by event_id`.execute(store.db);
      expect(rows.rows.map((r) => `${r.event_id} ${r.n}`).sort()).toEqual(fired.map((f) => `${f.eventId} 1`).sort());
    } finally {
      await store.close();
    }
  };

  beforeAll(async () => {
    database = await createTestDatabase('postgres', { empty: true });
    env = { ...database.env, PITCREW_SECRET_KEY: randomBytes(32).toString('base64') };
    ledger = path.join(tempDir(), 'ledger');
    fs.writeFileSync(ledger, '');
  }, 600_000);

  afterAll(async () => {
    for (const agent of agents) await agent.stop();
    for (const server of nodes.values()) await server.stop();
    await balancer?.close();
    await database?.drop();
    for (const dir of dirs) fs.rmSync(dir, { recursive: true, force: true });
  });

  it('the previous release migrates a new database and serves, its agent connected through the balancer', async () => {
    const oldDir = tempDir();
    const old = await start('old', oldDir, previous.bin);
    expect(appliedAtStart(old)).toEqual(previous.migrations);
    // Every node presents the certificate the first one made, as behind one load balancer address.
    env = { ...env, PITCREW_TLS_CERT: path.join(oldDir, 'tls/cert.pem'), PITCREW_TLS_KEY: path.join(oldDir, 'tls/key.pem') };

    const boot = await runCli(['bootstrap', '--json'], { ...env, PITCREW_DATA_DIR: tempDir() }, { bin: previous.bin });
    expect(boot.code, boot.stderr).toBe(0);
    tenant = JSON.parse(boot.stdout);
    balancer = await startBalancer([old.httpsUrl]);
    agents.push(spawnAgent({ bundle: previous.agentBundle, server: balancer.url, apiKey: tenant.apiKey, hostname: 'up-old', fingerprint: old.fingerprint }));
    await online(old, 'up-old');

    const rule = await api(old, 'POST', '/api/v1/rules', scriptRule({ action: { type: 'script', flavour: 'autofix', runbook: { script: `echo "$Mark" >> ${ledger}; echo "ran $Mark"` } } }));
    expect(rule.status, JSON.stringify(rule.body)).toBe(201);
    ruleId = rule.body.id as string;
    triggerId = (rule.body.trigger as { triggerId: string }).triggerId;
    await fire(old, 'up-old');
    await expectEachRanOnce(old);
  });

  it('two nodes of this release start at once on its database: the added migrations run once, under the lock', async () => {
    // Hold the migration lock (Kysely's migrator on PostgreSQL: one advisory lock, kept for the
    // whole run) and both nodes wait for it before they read what is applied.
    const holder = new pg.Client({ connectionString: database.env.DATABASE_URL });
    await holder.connect();
    let starting: Promise<ServerProcess[]>;
    try {
      await holder.query(`select pg_advisory_lock(${MIGRATION_LOCK_ID})`);
      starting = Promise.all([start('new1', tempDir()), start('new2', tempDir())]);
      const waiting = async () => (await holder.query<{ n: number }>("select count(*)::int as n from pg_locks where locktype = 'advisory' and not granted and database = (select oid from pg_database where datname = current_database())")).rows[0]!.n;
      await waitFor(async () => (await waiting()) === 2, 'both new nodes to wait for the migration lock', 60_000);
    } finally {
      await holder.end();
    }
    const [one, two] = await starting;
    const applied = [appliedAtStart(one!), appliedAtStart(two!)];
    // One of them ran what was missing; the other waited for the lock and found nothing to do.
    expect(applied.filter((list) => list.length > 0).length).toBeLessThanOrEqual(1);
    expect(applied.flat()).toEqual(added(previous));
    const store = database.open();
    try {
      expect(await recordedMigrations(store.db)).toEqual([...MIGRATION_NAMES].sort());
      // The previous release's own table still names only what it knows: it refuses to start on any other.
      const rows = await sql<{ name: string }>`select name from pitcrew_migrations order by name`.execute(store.db);
      expect(rows.rows.map((r) => r.name)).toEqual([...previous.migrations].sort());
    } finally {
      await store.close();
    }
    balancer.route([one!.httpsUrl]);
    agents.push(spawnAgent({ bundle: previous.agentBundle, server: balancer.url, apiKey: tenant.apiKey, hostname: 'up-new', fingerprint: one!.fingerprint }));
    await online(one!, 'up-new');
  });

  it('old and new nodes take webhooks at once, for agents on either: every accepted event runs exactly once', async () => {
    const servers = [node('old'), node('new1'), node('new2')];
    await Promise.all(Array.from({ length: 30 }, (_, i) => fire(servers[i % 3]!, i % 2 ? 'up-old' : 'up-new')));
    await expectEachRanOnce(node('new2'));
    // The previous release still reads everything on the new schema, what the new nodes wrote included.
    const listed = await api(node('old'), 'GET', `/api/v1/executions?ruleId=${ruleId}&limit=1000`);
    expect(listed.status).toBe(200);
    expect((listed.body.items as unknown[]).length).toBe(fired.length);
  });

  it('the old node restarts on the new schema (a crash mid-upgrade, or going back): it starts and serves', async () => {
    const dataDir = tempDir();
    await node('old').stop();
    const old = await start('old', dataDir, previous.bin);
    expect(appliedAtStart(old)).toEqual([]);
    await online(old, 'up-old');
    await Promise.all(Array.from({ length: 6 }, (_, i) => fire(old, i % 2 ? 'up-old' : 'up-new')));
    await expectEachRanOnce(old);
  });

  it('the old node stops; its agent reconnects through the balancer and the cluster serves on the new release only', async () => {
    balancer.route([node('new1').httpsUrl, node('new2').httpsUrl]);
    await node('old').stop();
    nodes.delete('old');
    await online(node('new1'), 'up-old');
    const servers = [node('new1'), node('new2')];
    await Promise.all(Array.from({ length: 10 }, (_, i) => fire(servers[i % 2]!, i % 3 ? 'up-old' : 'up-new')));
    await expectEachRanOnce(node('new1'));
  });
}, 600_000);
