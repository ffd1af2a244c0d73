/*
 * The agent logs JSON lines to stderr (journald keeps them). Callers pass names, ids and counts:
 * never the API key, the agent token, or the values of a script's environment.
 */

export type Fields = Record<string, string | number | boolean | null | undefined | string[]>;

export interface Logger {
  info(message: string, fields?: Fields): void;
  warn(message: string, fields?: Fields): void;
  error(message: string, fields?: Fields): void;
}

export function createLogger(write: (line: string) => void = (line) => process.stderr.write(line)): Logger {
  const log = (level: string) => (message: string, fields: Fields = {}) => {
    write(`${JSON.stringify({ time: new Date().toISOString(), level, msg: message, ...fields })}\n`);
  };
  return { info: log('info'), warn: log('warn'), error: log('error') };
}

/** A logger that drops everything, for tests. */
export const silentLogger: Logger = { info: () => undefined, warn: () => undefined, error: () => undefined };
