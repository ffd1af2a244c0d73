/**
 * Whether a database error means its disk is full: SQLite's SQLITE_FULL, PostgreSQL's
 * disk_full (SQLSTATE 53100). Retrying does not help until someone frees space, so callers say so.
 */
export function isDiskFull(error: unknown): boolean {
  const code = (error as { code?: unknown } | null)?.code;
  return code === 'SQLITE_FULL' || code === '53100';
}

/** PostgreSQL SQLSTATEs of a connection lost or refused: class 08, and the server shutting down or starting (57P01-57P03). */
const CONNECTION_SQLSTATES = /^(08...|57P0[123])$/;
const SOCKET_CODES = new Set(['ECONNREFUSED', 'ECONNRESET', 'EPIPE', 'ETIMEDOUT', 'EHOSTUNREACH', 'ENETUNREACH', 'EAI_AGAIN']);
/** What node-postgres says, without a code, of a connection that ended or could not be made. */
const LOST_MESSAGES = /^(Connection terminated|Client has encountered a connection error|timeout exceeded when trying to connect|Client was closed and is not queryable)/;

/**
 * Whether a database error means the connection to it was lost or could not be made: a failover,
 * a restart, pg_terminate_backend, a network cut. Not a bug and not the caller's fault: the same
 * work succeeds once the database answers again, so callers answer 503 or retry.
 */
export function isConnectionLost(error: unknown): boolean {
  if (!(error instanceof Error)) return false;
  const code = (error as { code?: unknown }).code;
  if (typeof code === 'string' && (CONNECTION_SQLSTATES.test(code) || SOCKET_CODES.has(code))) return true;
  return LOST_MESSAGES.test(error.message);
}
