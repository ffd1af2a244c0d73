import SqliteDatabase from 'better-sqlite3';
import { Kysely, PostgresDialect, SqliteDialect, type CompiledQuery } from 'kysely';
import type pg from 'pg';
import { afterAll, describe, expect, it } from 'vitest';
import type { Dialect } from '../store/database.js';
import type { Database, EscalationsTable, IdempotencyKeysTable } from '../store/schema.js';
import { Statements } from '../store/statements.js';
import { safetyWrites } from './safety-writes.js';

// Kysely compiles without a connection: the upserts as its builder wrote them before they became text.
const sqlite = new SqliteDatabase(':memory:');
const kyselyOf: Record<Dialect, Kysely<Database>> = {
  sqlite: new Kysely<Database>({ dialect: new SqliteDialect({ database: sqlite }) }),
  postgres: new Kysely<Database>({ dialect: new PostgresDialect({ pool: {} as pg.Pool }) }),
};
afterAll(() => sqlite.close());

const key = (n: number): IdempotencyKeysTable => ({ rule_id: 'r1', key: `k${n}`, tenant_id: 't1', event_id: `e${n}`, fingerprint: 'f', created_at: n });
const escalation = (n: number): EscalationsTable => ({
  id: `x${n}`, tenant_id: 't1', rule_id: 'r1', host_id: `h${n}`, hostname: `web-${n}`, host_key: `web-${n}`, window_start: 1, window_end: 2, state: 'pending',
  reason: 'limit', limited_events: 1, limit_max: 3, not_done: 'ran nothing', first_event_id: `e${n}`, last_event_id: `e${n}`, created_at: 1, updated_at: 1,
});

function kyselyKeys(db: Kysely<Database>, rows: IdempotencyKeysTable[]): CompiledQuery {
  return db.insertInto('idempotency_keys').values(rows).onConflict((oc) => oc.columns(['rule_id', 'key']).doUpdateSet((eb) => ({
    event_id: eb.ref('excluded.event_id'), fingerprint: eb.ref('excluded.fingerprint'), created_at: eb.ref('excluded.created_at'), tenant_id: eb.ref('excluded.tenant_id'),
  }))).compile();
}

function kyselyEscalations(db: Kysely<Database>, rows: EscalationsTable[]): CompiledQuery {
  return db.insertInto('escalations').values(rows).onConflict((oc) => oc.columns(['rule_id', 'host_id', 'window_start']).doUpdateSet((eb) => ({
    limited_events: eb('escalations.limited_events', '+', eb.ref('excluded.limited_events')), last_event_id: eb.ref('excluded.last_event_id'), updated_at: eb.ref('excluded.updated_at'),
  }))).compile();
}

describe.each(['sqlite', 'postgres'] as const)('the safety upserts on %s', (dialect) => {
  const db = kyselyOf[dialect];
  const statements = new Statements(dialect);

  it('are the statements Kysely compiled: the same text and parameters', () => {
    const [escalations, keys] = [[escalation(1), escalation(2)], [key(1), key(2), key(3)]];
    const ours = safetyWrites(statements, escalations, keys);
    expect(ours.map((q) => [q.sql, q.parameters])).toEqual([kyselyEscalations(db, escalations), kyselyKeys(db, keys)].map((q) => [q.sql, q.parameters]));
    // A batch without escalations or keys writes neither.
    expect(safetyWrites(statements, [], [key(1)]).map((q) => q.sql)).toEqual([kyselyKeys(db, [key(1)]).sql]);
    expect(safetyWrites(statements, [], [])).toEqual([]);
  });
});
