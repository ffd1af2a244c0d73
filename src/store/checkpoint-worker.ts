import fs from 'node:fs';
import os from 'node:os';
import { parentPort, workerData } from 'node:worker_threads';
import SqliteDatabase from 'better-sqlite3';

/*
 * The WAL checkpointer's thread (store/checkpointer.ts): a connection of its own to the database,
 * which copies the WAL's pages into it (PASSIVE: never waits for, nor blocks, the service's reads
 * and writes) once the WAL holds `pages` frames not yet copied, as many as SQLite's automatic
 * checkpoint copies at a time. Asked to look by the service's commits; tells what each did.
 */

export interface CheckpointWorkerData {
  file: string;
  pages: number;
}

export type CheckpointMessage = 'look' | 'close';

/** After each checkpoint: the WAL's frames, and how many of them are now in the database. */
export interface CheckpointDone {
  frames: number;
  copied: number;
}

const port = parentPort;
if (!port) throw new Error('store/checkpoint-worker.js runs as the WAL checkpointer’s thread (store/checkpointer.ts), not on its own');
const { file, pages } = workerData as CheckpointWorkerData;

const db = new SqliteDatabase(file, { timeout: 0 });
// The checkpoint syncs the WAL before it copies pages and the database after: as SQLite's own.
db.pragma('synchronous = FULL');
db.pragma('wal_autocheckpoint = 0');
const shm = fs.openSync(`${file}-shm`, 'r');
const header = Buffer.alloc(100);
const little = os.endianness() === 'LE';

/**
 * The WAL's frames and those copied, read from the wal-index (the -shm file,
 * https://sqlite.org/walformat.html#the_wal_index_file_format, native byte order): the header's
 * mxFrame (offset 16) and the checkpoint's nBackfill (offset 96). One read of shared memory,
 * against a checkpoint call that takes SQLite's locks even when it has nothing to copy.
 */
function walState(): CheckpointDone {
  if (fs.readSync(shm, header, 0, header.length, 0) < header.length) return { frames: 0, copied: 0 };
  const read = (offset: number) => (little ? header.readUInt32LE(offset) : header.readUInt32BE(offset));
  return { frames: read(16), copied: read(96) };
}

port.on('message', (message: CheckpointMessage) => {
  if (message === 'close') {
    fs.closeSync(shm);
    db.close();
    port.close();
    return;
  }
  const { frames, copied } = walState();
  if (frames - copied < pages) return;
  const [done] = db.pragma('wal_checkpoint(PASSIVE)') as Array<{ log: number; checkpointed: number }>;
  port.postMessage({ frames: done?.log ?? 0, copied: done?.checkpointed ?? 0 } satisfies CheckpointDone);
});
