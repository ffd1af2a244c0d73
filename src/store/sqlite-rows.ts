import type SqliteDatabase from 'better-sqlite3';
import type { SqliteStatement } from 'kysely';

type RowOf = (values: unknown[]) => Record<string, unknown>;

/**
 * A statement as Kysely's SQLite driver runs it, its rows built here instead of by better-sqlite3.
 * better-sqlite3 builds a row object in C++: on Node 20 one property at a time, each column's
 * name made a V8 string again (its GetFlatRowJS), ~0.3 µs a column; on Node 22+ from a key list.
 * Here the rows come as arrays (raw mode) and each becomes one object literal of the statement's
 * own columns, compiled once per statement: a row of `incidents` (25 columns, 120 rows by id)
 * costs 9.9 → 4.7 µs on Node 20 and 4.0 → 2.7 µs on Node 24 (bench/sqlite-rows.js).
 *
 * Same rows: the columns in their order, a name given twice keeps its last value. A statement that
 * names a column `__proto__` (which an object literal would take for the prototype) keeps
 * better-sqlite3's rows.
 */
export function withObjectRows(statement: SqliteDatabase.Statement): SqliteStatement {
  if (!statement.reader) return statement;
  const names = statement.columns().map((column) => column.name);
  if (names.includes('__proto__')) return statement;
  // JSON.stringify makes each name a string literal, whatever its characters.
  const rowOf = new Function('values', `return { ${names.map((name, i) => `${JSON.stringify(name)}: values[${i}]`).join(', ')} };`) as RowOf;
  statement.raw(true);
  return {
    reader: true,
    all(parameters) {
      const rows = statement.all(parameters) as unknown[];
      for (let i = 0; i < rows.length; i++) rows[i] = rowOf(rows[i] as unknown[]);
      return rows;
    },
    run: (parameters) => statement.run(parameters),
    *iterate(parameters) {
      for (const values of statement.iterate(parameters)) yield rowOf(values as unknown[]);
    },
  };
}
