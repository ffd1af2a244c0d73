// The SQLite connection, on a worker thread so that statements and the disk sync of each commit
// (synchronous=FULL) never block the service's event loop. Plain JavaScript: it is loaded as a
// worker script both from dist/ and, in tests, from src/. Messages: see sqlite-dialect.ts.
import { parentPort, workerData } from 'node:worker_threads';
import Database from 'better-sqlite3';

const db = new Database(workerData.file, { timeout: workerData.busyTimeoutMs });
// WAL lets readers run beside the writer; synchronous=FULL makes every commit reach the disk
// before we reply, so an accepted event survives a crash or power loss (group commit pays for it).
db.pragma('journal_mode = WAL');
db.pragma('synchronous = FULL');
db.pragma('foreign_keys = ON');

// Preparing costs more than running most of our statements: reuse them by their SQL text.
const statements = new Map();
const CAPACITY = 500;

function prepare(sql) {
  let statement = statements.get(sql);
  if (statement) statements.delete(sql);
  else {
    statement = db.prepare(sql);
    if (statements.size >= CAPACITY) statements.delete(statements.keys().next().value);
  }
  statements.set(sql, statement);
  return statement;
}

function run(sql, params) {
  const statement = prepare(sql);
  if (statement.reader) return { rows: statement.all(params) };
  const { changes, lastInsertRowid } = statement.run(params);
  return { changes, lastInsertRowid: Number(lastInsertRowid) };
}

parentPort.on('message', ({ id, sql, params, batch, close }) => {
  if (close) {
    db.close();
    parentPort.postMessage({ id });
    return;
  }
  try {
    // A batch runs its statements in order in one trip; the first failure stops it.
    if (batch) parentPort.postMessage({ id, results: batch.map((query) => run(query.sql, query.params)) });
    else parentPort.postMessage({ id, ...run(sql, params) });
  } catch (error) {
    parentPort.postMessage({ id, error: { message: error.message, code: error.code } });
  }
});

parentPort.postMessage({ ready: true });
