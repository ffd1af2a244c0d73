import type { Compilable, CompiledQuery, Kysely } from 'kysely';
import type { Database } from './schema.js';

/** Stands for the n-th argument while the query is built once: no caller's value looks like it. */
const PLACEHOLDER = '\u0000pitcrew-argument-';

type Slot = { argument: number } | { value: unknown };

/**
 * A query of a fixed shape built and compiled once per database, then run with each call's values.
 * Kysely builds and compiles a query anew on every call: for the three-table join that checks a
 * token that took longer than SQLite took to run it, on every request of the management API
 * (bench/api.js, CPU profile). `build` receives stand-ins for its arguments; each stand-in found
 * among the compiled parameters is replaced by the call's value, and every other parameter (a
 * constant of the query) is kept as compiled.
 */
export function preparedQuery<Args extends unknown[], Row>(build: (db: Kysely<Database>, ...args: Args) => Compilable<Row>): (db: Kysely<Database>, ...args: Args) => Promise<Row[]> {
  const statement = preparedStatement(build);
  return async (db, ...args) => (await db.executeQuery<Row>(statement(db, ...args))).rows;
}

/** The same, compiled for a caller that runs it itself (a group commit's statements, store/batch.ts). */
export function preparedStatement<Args extends unknown[], Row>(build: (db: Kysely<Database>, ...args: Args) => Compilable<Row>): (db: Kysely<Database>, ...args: Args) => CompiledQuery<Row> {
  const compiled = new WeakMap<Kysely<Database>, { query: CompiledQuery<Row>; slots: Slot[] }>();
  return (db, ...args) => {
    let entry = compiled.get(db);
    if (!entry) {
      const standIns = args.map((_, index) => `${PLACEHOLDER}${index}`) as Args;
      const query = build(db, ...standIns).compile();
      const slots = query.parameters.map((parameter): Slot => (typeof parameter === 'string' && parameter.startsWith(PLACEHOLDER) ? { argument: Number(parameter.slice(PLACEHOLDER.length)) } : { value: parameter }));
      entry = { query, slots };
      compiled.set(db, entry);
    }
    const parameters = entry.slots.map((slot) => ('argument' in slot ? args[slot.argument] : slot.value));
    return { ...entry.query, parameters };
  };
}

/**
 * A query over a list of keys (`where … in (…)`), built and compiled once per size class: the
 * list is padded to the next power of two with its last key again, which changes no answer. The
 * reads shared by a turn's hellos (store/turn-loader.ts) come with every count from 1 to 500;
 * Kysely built each anew (0.05 ms of CPU per agent back after a restart, bench/README.md session
 * 33), and SQLite's statement cache (database.ts) would hold hundreds of texts instead of ten.
 */
export function preparedListStatement<Row>(build: (db: Kysely<Database>, keys: string[]) => Compilable<Row>): (db: Kysely<Database>, keys: readonly string[]) => CompiledQuery<Row> {
  const bySize = new Map<number, (db: Kysely<Database>, ...keys: string[]) => CompiledQuery<Row>>();
  return (db, keys) => {
    if (keys.length === 0) throw new Error('preparedListStatement: an empty list has no query');
    const size = sizeClass(keys.length);
    let statement = bySize.get(size);
    if (!statement) {
      statement = preparedStatement((builder, ...standIns: string[]) => build(builder, standIns));
      bySize.set(size, statement);
    }
    const padded = keys.concat(new Array<string>(size - keys.length).fill(keys[keys.length - 1]!));
    return statement(db, ...padded);
  };
}

/** The same, run. */
export function preparedListQuery<Row>(build: (db: Kysely<Database>, keys: string[]) => Compilable<Row>): (db: Kysely<Database>, keys: readonly string[]) => Promise<Row[]> {
  const statement = preparedListStatement(build);
  return async (db, keys) => (keys.length === 0 ? [] : (await db.executeQuery<Row>(statement(db, keys))).rows);
}

function sizeClass(count: number): number {
  return 2 ** Math.ceil(Math.log2(count));
}
