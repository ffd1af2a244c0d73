import { CompiledQuery, type Insertable, type Updateable } from 'kysely';
import type { Dialect } from './database.js';
import type { Database } from './schema.js';

/**
 * The group commits' statements, written as text instead of through Kysely's query builder.
 * Building and compiling a multi-row insert cost ~2 µs per row and each small query ~0.1 ms
 * (ingest benchmark, CPU profile): more than SQLite took to run them. The text of each shape
 * (table, columns, row count) is made once, so SQLite's statement cache (database.ts) hits too.
 * The result is what Kysely would compile: a column a row lacks is `default` on PostgreSQL and
 * `null` on SQLite, which has no `default` in VALUES.
 */
/**
 * Bound parameters one statement may carry: SQLite's SQLITE_MAX_VARIABLE_NUMBER (32,766 since
 * 3.32) and PostgreSQL's wire protocol (a 16-bit count). A multi-row insert over the limit is
 * refused whole ("too many SQL variables"): a fan-out of 1,561 executions on SQLite was.
 */
export const MAX_PARAMETERS: Readonly<Record<Dialect, number>> = { sqlite: 32_766, postgres: 65_535 };

/**
 * Inserts of more rows are not kept for reuse: a group commit's are up to PITCREW_INGEST_MAX_BATCH
 * (1000) rows; larger ones are fan-outs over a fleet, each of its own size, and their texts run to
 * hundreds of kilobytes.
 */
const MAX_KEPT_ROWS = 1000;

/** A row that sets every column, in the shape of an insert's rows (one character, not one per column). */
const FULL = '+';

export class Statements {
  private readonly texts = new Map<string, string>();

  constructor(private readonly dialect: Dialect) {}

  /**
   * INSERTs for all the rows, as few as the database's parameter limit allows: one for the rows
   * of a usual batch, more for a fan-out the size of a fleet. Run them in one transaction.
   * `onConflict`: a clause both databases read alike (`on conflict (…) do update set …`), after the values.
   */
  inserts<T extends keyof Database & string>(table: T, rows: ReadonlyArray<Insertable<Database[T]>>, onConflict = ''): CompiledQuery[] {
    const columns = columnsOf(rows as ReadonlyArray<Record<string, unknown>>);
    const perStatement = Math.max(1, Math.floor(MAX_PARAMETERS[this.dialect] / Math.max(1, columns.length)));
    const chunks = chunksWithin(rows, perStatement);
    // One statement (a usual batch): its columns are the rows' own, found once.
    return chunks.length === 1 ? [this.insertOf(table, rows, onConflict, columns)] : chunks.map((chunk) => this.insert(table, chunk, onConflict));
  }

  /** Values for `in (…)` lists of one parameter each, cut to what one statement can carry. */
  inLists<V>(values: readonly V[], otherParameters = 0): V[][] {
    return chunksWithin(values, MAX_PARAMETERS[this.dialect] - otherParameters);
  }

  /** One INSERT for all the rows: within MAX_PARAMETERS, or use `inserts`. */
  insert<T extends keyof Database & string>(table: T, rows: ReadonlyArray<Insertable<Database[T]>>, onConflict = ''): CompiledQuery {
    return this.insertOf(table, rows, onConflict, columnsOf(rows as ReadonlyArray<Record<string, unknown>>));
  }

  /** `columns`: every column the rows set (columnsOf). */
  private insertOf(table: string, rows: ReadonlyArray<unknown>, onConflict: string, columns: string[]): CompiledQuery {
    const records = rows as ReadonlyArray<Record<string, unknown>>;
    const parameters: unknown[] = new Array(records.length * columns.length);
    let n = 0;
    // Each row's part of the text: FULL when it sets every column (a batch's usual row), else its mask.
    let shape = '';
    for (let r = 0; r < records.length; r++) {
      const row = records[r]!;
      let mask: string | undefined;
      for (let c = 0; c < columns.length; c++) {
        const value = row[columns[c]!];
        if (value === undefined) mask = (mask ?? '1'.repeat(c)) + '0';
        else {
          parameters[n++] = value;
          if (mask !== undefined) mask += '1';
        }
      }
      shape += mask ?? FULL;
    }
    parameters.length = n;
    // The text of a fan-out's thousands of rows is made for its one use, not kept (see MAX_KEPT_ROWS).
    if (rows.length > MAX_KEPT_ROWS) return CompiledQuery.raw(this.insertText(table, columns, shape, onConflict), parameters);
    const key = `insert\n${table}\n${columns.join(',')}\n${shape}\n${onConflict}`;
    const text = this.texts.get(key) ?? this.remember(key, this.insertText(table, columns, shape, onConflict));
    return CompiledQuery.raw(text, parameters);
  }

  /** UPDATE one row by id; `also`: further columns the row must still hold (`and "host_id" = ?`). */
  updateById<T extends keyof Database & string>(table: T, set: Updateable<Database[T]>, id: string, also: Record<string, string> = {}): CompiledQuery {
    const columns = Object.keys(set).filter((column) => (set as Record<string, unknown>)[column] !== undefined);
    const guards = Object.keys(also);
    const parameters = [...columns.map((column) => (set as Record<string, unknown>)[column]), id, ...guards.map((column) => also[column])];
    const key = `update\n${table}\n${columns.join(',')}\n${guards.join(',')}`;
    const text = this.texts.get(key) ?? this.remember(key, this.updateText(table, columns, guards));
    return CompiledQuery.raw(text, parameters);
  }

  /** `$1, $2, ...` on PostgreSQL, `?, ?, ...` on SQLite: `count` placeholders after `before` others. */
  list(count: number, before = 0): string {
    return Array.from({ length: count }, (_, i) => this.placeholder(before + i + 1)).join(', ');
  }

  private updateText(table: string, columns: string[], guards: string[]): string {
    const assignments = columns.map((c, i) => `${quote(c)} = ${this.placeholder(i + 1)}`).join(', ');
    const where = ['id', ...guards].map((c, i) => `${quote(c)} = ${this.placeholder(columns.length + i + 1)}`).join(' and ');
    return `update ${quote(table)} set ${assignments} where ${where}`;
  }

  /** `shape`: per row, FULL or a mask of one character per column ('1' set, '0' missing). */
  private insertText(table: string, columns: string[], shape: string, onConflict: string): string {
    let n = 0;
    const missing = this.dialect === 'postgres' ? 'default' : 'null';
    const values: string[] = [];
    for (let at = 0; at < shape.length;) {
      const mask = shape[at] === FULL ? '1'.repeat(columns.length) : shape.slice(at, at + columns.length);
      at += shape[at] === FULL ? 1 : columns.length;
      values.push(`(${[...mask].map((bit) => (bit === '1' ? this.placeholder(++n) : missing)).join(', ')})`);
    }
    return `insert into ${quote(table)} (${columns.map(quote).join(', ')}) values ${values.join(', ')}${onConflict ? ` ${onConflict}` : ''}`;
  }

  private placeholder(position: number): string {
    return this.dialect === 'postgres' ? `$${position}` : '?';
  }

  private remember(key: string, text: string): string {
    // Bounded like SQLite's statement cache: shapes beyond it are rare (row counts up to maxBatch).
    if (this.texts.size >= 2000) this.texts.delete(this.texts.keys().next().value!);
    this.texts.set(key, text);
    return text;
  }
}

/** Consecutive slices of at most `size` items (one slice, the array itself, when it fits). */
export function chunksWithin<V>(items: readonly V[], size: number): V[][] {
  if (items.length <= size) return items.length === 0 ? [] : [items as V[]];
  const chunks: V[][] = [];
  for (let start = 0; start < items.length; start += size) chunks.push(items.slice(start, start + size));
  return chunks;
}

/** Every column any row sets, in the order first seen. */
function columnsOf(rows: ReadonlyArray<Record<string, unknown>>): string[] {
  const columns: string[] = [];
  const seen = new Set<string>();
  for (const row of rows) {
    for (const column in row) {
      if (row[column] !== undefined && !seen.has(column)) {
        seen.add(column);
        columns.push(column);
      }
    }
  }
  return columns;
}

function quote(identifier: string): string {
  return `"${identifier.replaceAll('"', '""')}"`;
}
