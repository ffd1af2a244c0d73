import SqliteDatabase from 'better-sqlite3';
import { afterEach, beforeEach, describe, expect, it } from 'vitest';
import { withObjectRows } from './sqlite-rows.js';

describe('withObjectRows', () => {
  let sqlite: SqliteDatabase.Database;
  beforeEach(() => {
    sqlite = new SqliteDatabase(':memory:');
    sqlite.exec(`create table t (id integer primary key, name text, "odd ""name"" \\ with'quotes" text, big integer, data blob)`);
    sqlite.prepare('insert into t values (?, ?, ?, ?, ?)').run(1, 'one', 'q1', 2 ** 53 - 1, Buffer.from([1, 2]));
    sqlite.prepare('insert into t values (?, ?, ?, ?, ?)').run(2, null, 'q2', -5, null);
  });
  afterEach(() => sqlite.close());

  /** The rows better-sqlite3 builds itself, beside this module's, for the same statement and parameters. */
  const both = (source: string, parameters: unknown[] = []) => ({
    own: sqlite.prepare(source).all(parameters),
    built: withObjectRows(sqlite.prepare(source)).all(parameters),
  });

  it('builds the rows better-sqlite3 builds: every column, in order, with its value and type', () => {
    const { own, built } = both('select * from t where id >= ? order by id', [1]);
    expect(built).toEqual(own);
    expect(built).toHaveLength(2);
    expect(Object.keys(built[0] as object)).toEqual(['id', 'name', `odd "name" \\ with'quotes`, 'big', 'data']);
    expect((built[0] as { data: Buffer }).data).toEqual(Buffer.from([1, 2]));
  });

  it('keeps the last value of a name given twice, as better-sqlite3 does', () => {
    const { own, built } = both('select id as x, name as x, id from t order by id');
    expect(built).toEqual(own);
    expect(built[0]).toEqual({ x: 'one', id: 1 });
  });

  it('leaves a column named __proto__ to better-sqlite3: an object literal would take it for the prototype', () => {
    const statement = withObjectRows(sqlite.prepare('select id as "__proto__", name from t where id = 1'));
    const [row] = statement.all([]) as Array<Record<string, unknown>>;
    expect(Object.getPrototypeOf(row)).toBe(Object.prototype);
    expect(row).toEqual(sqlite.prepare('select id as "__proto__", name from t where id = 1').get());
  });

  it('iterates the same rows, and leaves writes and their results as they are', () => {
    const statement = withObjectRows(sqlite.prepare('select id, name from t order by id'));
    expect([...statement.iterate([])]).toEqual(sqlite.prepare('select id, name from t order by id').all());
    const insert = withObjectRows(sqlite.prepare('insert into t (id, name) values (?, ?)'));
    expect(insert.reader).toBe(false);
    expect(insert.run([3, 'three'])).toMatchObject({ changes: 1, lastInsertRowid: 3 });
    const returning = withObjectRows(sqlite.prepare('insert into t (id, name) values (?, ?) returning id, name'));
    expect(returning.all([4, 'four'])).toEqual([{ id: 4, name: 'four' }]);
  });
});
