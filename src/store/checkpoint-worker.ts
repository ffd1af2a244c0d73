import { parentPort, workerData } from 'node:worker_threads';
import SqliteDatabase from 'better-sqlite3';

/*
 * The SQLite checkpointer's thread (store/checkpointer.ts): with a connection of its own, it copies
 * the pages the WAL holds into the database file, so the commits of the event loop's connection
 * only append. PASSIVE checkpoints never wait for the writer or readers, and the writer never waits
 * for them (SQLite's WAL design: https://sqlite.org/wal.html#checkpointing). Frames are copied only
 * once the WAL is synced, and the database file is synced after (synchronous=NORMAL here, as SQLite
 * does in the writer's own checkpoints).
 */

export interface CheckpointWorkerData {
  file: string;
  busyTimeoutMs: number;
  /** Between passes while the WAL grows. */
  activeMs: number;
  /** The longest rest between passes once nothing is left to copy (the rest doubles up to it). */
  idleMs: number;
}

interface PassResult {
  busy: number;
  log: number;
  checkpointed: number;
}

if (!parentPort) throw new Error('store/checkpoint-worker.js runs as a worker thread of the SQLite store (store/checkpointer.ts), not on its own');
const settings = workerData as CheckpointWorkerData;

const db = new SqliteDatabase(settings.file, { fileMustExist: true, timeout: settings.busyTimeoutMs });
db.pragma('synchronous = NORMAL');
const checkpoint = db.prepare('pragma wal_checkpoint(PASSIVE)');

let last: PassResult = { busy: 0, log: -1, checkpointed: -1 };
let rest = settings.activeMs;
setTimeout(pass, rest);

function pass(): void {
  const result = checkpoint.get() as PassResult;
  const moved = result.log !== last.log || result.checkpointed !== last.checkpointed;
  const behind = result.busy !== 0 || result.checkpointed < result.log;
  last = result;
  // An idle service's WAL has nothing to copy: the passes space out, and come back at once with writes.
  rest = moved || behind ? settings.activeMs : Math.min(settings.idleMs, rest * 2);
  setTimeout(pass, rest);
}
