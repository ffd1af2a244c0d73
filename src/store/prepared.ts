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
