import SqliteDatabase from 'better-sqlite3';
import { Kysely, PostgresDialect, SqliteDialect, type CompiledQuery } from 'kysely';
import type pg from 'pg';
import { afterAll, describe, expect, it } from 'vitest';
import type { Dialect } from './database.js';
import type { Database } from './schema.js';
import { MAX_PARAMETERS, Statements } from './statements.js';

// Kysely compiles without a connection: the reference for what Statements must produce.
const sqlite = new SqliteDatabase(':memory:');
const kyselyOf: Record<Dialect, Kysely<Database>> = {
  sqlite: new Kysely<Database>({ dialect: new SqliteDialect({ database: sqlite }) }),
  postgres: new Kysely<Database>({ dialect: new PostgresDialect({ pool: {} as pg.Pool }) }),
};
afterAll(() => sqlite.close());

const same = (ours: CompiledQuery, kysely: CompiledQuery) => {
  expect(ours.sql).toBe(kysely.sql);
  expect(ours.parameters).toEqual(kysely.parameters);
};

const transition = (id: string, extra: Record<string, unknown> = {}) => ({ id, execution_id: 'e1', from_state: null, to_state: 'queued', reason: null, at: 1, ...extra });

describe.each(['sqlite', 'postgres'] as const)('Statements on %s', (dialect) => {
  const db = kyselyOf[dialect];
  const statements = new Statements(dialect);

  it('cuts an insert into statements within the parameter limit, every row once, and keeps one statement when it fits', () => {
    const rows = Array.from({ length: 20_000 }, (_, i) => transition(`t${i}`));
    const inserts = statements.inserts('execution_transitions', rows);
    const perStatement = Math.floor(MAX_PARAMETERS[dialect] / 6);
    expect(inserts).toHaveLength(Math.ceil(20_000 / perStatement));
    for (const insert of inserts) expect(insert.parameters.length).toBeLessThanOrEqual(MAX_PARAMETERS[dialect]);
    expect(inserts.flatMap((insert) => insert.parameters)).toEqual(rows.flatMap((row) => Object.values(row)));
    same(statements.inserts('execution_transitions', rows.slice(0, 3))[0]!, db.insertInto('execution_transitions').values(rows.slice(0, 3)).compile());
    expect(statements.inserts('execution_transitions', [])).toEqual([]);
  });

  it('writes a multi-row insert as Kysely compiles it', () => {
    const rows = [transition('t1'), transition('t2', { from_state: 'queued', to_state: 'dispatched' }), transition('t3')];
    same(statements.insert('execution_transitions', rows), db.insertInto('execution_transitions').values(rows).compile());
  });

  it('fills a column one row lacks (or leaves undefined) as Kysely does: default, or null on SQLite', () => {
    const rows = [transition('t1'), { id: 't2', execution_id: 'e1', to_state: 'queued', at: 2 }, transition('t3', { reason: undefined })];
    same(statements.insert('execution_transitions', rows), db.insertInto('execution_transitions').values(rows).compile());
  });

  it('writes an update by id as Kysely compiles it, leaving out undefined values', () => {
    const set = { state: 'running', started_at: 5, reason: null, exit_code: undefined };
    same(statements.updateById('executions', set, 'x1'), db.updateTable('executions').set(set).where('id', '=', 'x1').compile());
  });

  it('writes an update by id that holds only while the row still has the guarded values', () => {
    const set = { state: 'lost', reason: 'gone' };
    same(statements.updateById('executions', set, 'x1', { host_id: 'h1' }), db.updateTable('executions').set(set).where('id', '=', 'x1').where('host_id', '=', 'h1').compile());
  });

  it('makes the text of one shape once, so the database can reuse its prepared statement', () => {
    const first = statements.insert('execution_transitions', [transition('a'), transition('b')]);
    const second = statements.insert('execution_transitions', [transition('c'), transition('d')]);
    expect(second.sql).toBe(first.sql);
    expect(second.parameters).not.toEqual(first.parameters);
  });

  it('keeps apart shapes whose rows lack columns in different places, a full row among them', () => {
    const full = transition('t1');
    const lacking = { id: 't2', execution_id: 'e1', to_state: 'queued', at: 2 };
    for (const rows of [[full, lacking], [lacking, full], [lacking, lacking, full], [full, full, lacking]]) {
      same(statements.insert('execution_transitions', rows), db.insertInto('execution_transitions').values(rows).compile());
    }
  });

  it('numbers placeholders for IN lists after the ones before them', () => {
    expect(statements.list(3, 2)).toBe(dialect === 'postgres' ? '$3, $4, $5' : '?, ?, ?');
  });
});

describe('the parameter limit', () => {
  it("is SQLite's: one more parameter than MAX_PARAMETERS is refused, as many are taken", () => {
    const select = (n: number) => sqlite.prepare(`select 1 where 1 in (${Array(n).fill('?').join(',')})`).all(...Array(n).fill(1));
    expect(() => select(MAX_PARAMETERS.sqlite)).not.toThrow();
    expect(() => select(MAX_PARAMETERS.sqlite + 1)).toThrow(/too many SQL variables/);
  });
});
