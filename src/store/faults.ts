/**
 * Whether a database error means its disk is full: SQLite's SQLITE_FULL, PostgreSQL's
 * disk_full (SQLSTATE 53100). Retrying does not help until someone frees space, so callers say so.
 */
export function isDiskFull(error: unknown): boolean {
  const code = (error as { code?: unknown } | null)?.code;
  return code === 'SQLITE_FULL' || code === '53100';
}

/** SQLite's result codes for a statement refused for the values it carries. */
const SQLITE_REFUSED = ['SQLITE_CONSTRAINT', 'SQLITE_TOOBIG', 'SQLITE_MISMATCH', 'SQLITE_RANGE'];

/**
 * Whether the database refused a statement for the values in it, not for its own state: a NUL
 * in text or a value too big for an index on PostgreSQL (SQLSTATE classes 22 and 54, 23 for a
 * constraint), a constraint on SQLite, too many parameters on either. The transaction was rolled
 * back, and the same values would be refused again: a retry cannot help, and the calls that did
 * not carry them can be stored without them (store/group-commit.ts).
 */
export function isRefusedData(error: unknown): boolean {
  const { code, message } = (error ?? {}) as { code?: unknown; message?: unknown };
  if (typeof code !== 'string') return false;
  if (code.startsWith('SQLITE_')) {
    return SQLITE_REFUSED.some((refused) => code.startsWith(refused)) || (code === 'SQLITE_ERROR' && /too many SQL variables/.test(String(message)));
  }
  // Over 65,535 parameters the wire protocol's 16-bit count wraps, and the server sees a bad bind.
  if (code === '08P01') return /^bind message has \d+ parameter formats but \d+ parameters$/.test(String(message));
  return /^(22|23|54)[0-9A-Z]{3}$/.test(code);
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
  // 08P01 is also a bind over 65,535 parameters: refused data on a connection that stays up.
  if (isRefusedData(error)) return false;
  const code = (error as { code?: unknown }).code;
  if (typeof code === 'string' && (CONNECTION_SQLSTATES.test(code) || SOCKET_CODES.has(code))) return true;
  return LOST_MESSAGES.test(error.message);
}
