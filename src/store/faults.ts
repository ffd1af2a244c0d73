/**
 * Whether a database error means its disk is full: SQLite's SQLITE_FULL, PostgreSQL's
 * disk_full (SQLSTATE 53100). Retrying does not help until someone frees space, so callers say so.
 */
export function isDiskFull(error: unknown): boolean {
  const code = (error as { code?: unknown } | null)?.code;
  return code === 'SQLITE_FULL' || code === '53100';
}
