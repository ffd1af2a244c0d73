import { CompiledQuery, type Insertable } from 'kysely';
import type { Dialect } from '../store/database.js';
import type { IncidentRow, IncidentsTable } from '../store/schema.js';
import { chunksWithin, MAX_PARAMETERS, type Statements } from '../store/statements.js';
import type { IncidentBook } from './book.js';

type Column = keyof IncidentRow;

/**
 * What a firing changes on a stored incident (open, or resolved and re-counted by an import): its
 * occurrence, and the alert and event it chains. Its rule and execution lists change only when it
 * is linked to another rule or execution (TOUCHED): a re-firing that queues nothing leaves them as
 * stored, and its update carries 10 parameters instead of 13 (bench/incident-book.js).
 */
const OCCURRED: ReadonlyArray<readonly [Column, 'text' | 'bigint' | 'integer']> = [
  ['severity', 'text'],
  ['last_seen_at', 'bigint'],
  ['last_fired_at', 'bigint'],
  ['last_fingerprint', 'text'],
  ['occurrences', 'integer'],
  ['last_alert_id', 'text'],
  ['alert_count', 'integer'],
  ['last_event_id', 'text'],
  ['event_count', 'integer'],
];
const TOUCHED: ReadonlyArray<readonly [Column, 'text' | 'bigint' | 'integer']> = [
  ...OCCURRED,
  ['rule_ids', 'text'],
  ['execution_ids', 'text'],
  ['execution_count', 'integer'],
];
/** A resolution changes the state too. Apart, so an occurrence leaves the indexes on state and resolved_at alone. */
const RESOLVING: ReadonlyArray<readonly [Column, 'text' | 'bigint' | 'integer']> = [
  ...TOUCHED,
  ['state', 'text'],
  ['resolved_at', 'bigint'],
  ['resolved_by', 'text'],
  ['resolved_by_user', 'text'],
];

/**
 * The statements that write a book's changes: one update of the stored incidents resolved, one
 * insert of the new ones, an update of those touched (one of those linked, one of the others),
 * each row by id (`update … from (values …)`, which SQLite has had since 3.33): a batch of a
 * hundred alarms re-firing is one statement, not a hundred, which on PostgreSQL would be a
 * hundred round trips.
 */
export function incidentWrites(statements: Statements, dialect: Dialect, book: IncidentBook): CompiledQuery[] {
  const { inserts, touched, resolving, linked } = book.changes();
  // Resolutions first: an incident a quiet period ended is resolved before the next of its alarm opens.
  return [
    ...updates(dialect, resolving, RESOLVING),
    ...statements.inserts('incidents', withoutEmpty(inserts)),
    ...updates(dialect, touched.filter((row) => linked.has(row.id)), TOUCHED),
    ...updates(dialect, touched.filter((row) => !linked.has(row.id)), OCCURRED),
  ];
}

/** Columns a new incident often leaves empty; null is their default. */
const START_EMPTY = ['resolved_at', 'resolved_by', 'resolved_by_user', 'last_fix_at', 'last_alert_id', 'last_event_id'] as const;

/**
 * The new incidents without the START_EMPTY columns none of them sets: the insert leaves those to
 * their default instead of binding a null per row (an open incident of the ingest: 21 parameters,
 * not 25). Only columns empty in every row, so a batch's rows keep one shape: the statement's text
 * varies by which of the six are left out, a few shapes in practice (store/statements.ts keeps each).
 */
function withoutEmpty(rows: IncidentRow[]): Array<Insertable<IncidentsTable>> {
  const empty = START_EMPTY.filter((column) => rows.every((row) => row[column] === null));
  if (empty.length === 0) return rows;
  return rows.map((row) => {
    const insertable: Insertable<IncidentsTable> = { ...row };
    for (const column of empty) insertable[column] = undefined;
    return insertable;
  });
}

const texts = new Map<string, string>();

function updates(dialect: Dialect, rows: readonly IncidentRow[], columns: ReadonlyArray<readonly [Column, string]>): CompiledQuery[] {
  const width = columns.length + 1;
  return chunksWithin(rows, Math.floor(MAX_PARAMETERS[dialect] / width)).map((chunk) => {
    const key = `${dialect}\n${columns.length}\n${chunk.length}`;
    let text = texts.get(key);
    if (text === undefined) {
      text = updateText(dialect, chunk.length, columns);
      // A batch holds up to PITCREW_INGEST_MAX_BATCH incidents: a few hundred shapes at most.
      if (texts.size < 4000) texts.set(key, text);
    }
    const parameters: unknown[] = [];
    for (const row of chunk) {
      parameters.push(row.id);
      for (const [column] of columns) parameters.push(row[column]);
    }
    return CompiledQuery.raw(text, parameters);
  });
}

function updateText(dialect: Dialect, count: number, columns: ReadonlyArray<readonly [Column, string]>): string {
  let n = 0;
  // PostgreSQL types a VALUES list's parameters as text unless told.
  const placeholder = (type: string) => (dialect === 'postgres' ? `$${++n}::${type}` : '?');
  const row = () => `(${[placeholder('text'), ...columns.map(([, type]) => placeholder(type))].join(', ')})`;
  const values = Array.from({ length: count }, row).join(', ');
  const assignments = columns.map(([column], i) => `"${column}" = "v"."column${i + 2}"`).join(', ');
  return `update "incidents" set ${assignments} from (values ${values}) as "v" where "incidents"."id" = "v"."column1"`;
}
