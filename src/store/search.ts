import { sql, type RawBuilder } from 'kysely';

/**
 * `column` contains `text`, in any case, with `%`, `_` and `\` taken literally: a list's `search`.
 * SQLite's LIKE has no escape character unless one is named. lower() on both sides, so that any
 * exact part of a name finds it even where SQLite's lower() folds only ASCII letters.
 */
export function containsText(column: string, text: string): RawBuilder<boolean> {
  const escaped = text.replace(/[\\%_]/g, (c) => `\\${c}`);
  return sql<boolean>`lower(${sql.ref(column)}) like lower(${`%${escaped}%`}) escape '\\'`;
}
