import { Worker } from 'node:worker_threads';
import type SqliteDatabase from 'better-sqlite3';
import type { CheckpointWorkerData } from './checkpoint-worker.js';

/** Where the checkpointer's thread code is: the built checkpoint-worker.js beside this file, unless a test runs the sources. */
export interface CheckpointWorkerEntry {
  url: URL;
  execArgv?: string[];
}

export const CHECKPOINT_WORKER: CheckpointWorkerEntry = { url: new URL('./checkpoint-worker.js', import.meta.url) };

/** SQLite's own default: the writing connection checkpoints in the commit that brings the WAL to this many pages. */
export const INLINE_CHECKPOINT_PAGES = 1000;

/**
 * With the thread at work, the writing connection checkpoints only past this many pages: when the
 * thread has not caught up with a stream of commits (the WAL restarts only once every frame is
 * copied), that checkpoint finds little left to copy.
 */
export const GUARD_CHECKPOINT_PAGES = 4000;

const PASS_MS = 50;
const IDLE_MS = 1000;

/**
 * Checkpoints of a SQLite store on a thread of its own (docs/operations.md, "SQLite checkpoints").
 *
 * Measured reason: SQLite checkpoints in the commit that fills the WAL to 1,000 pages, on the
 * connection's thread: here the event loop's. Copying the pages into the database file and the two
 * syncs around it held the loop once every few group commits, and an incident's random-key indexes
 * fill the WAL faster than the alert rows alone. With the copying on this thread, the alert
 * benchmark's paths that open and resolve incidents kept 9-10 points more of the release before
 * incidents (medians of seven runs against six, bench/README.md, session 38).
 *
 * If the thread cannot open the database or dies, the writing connection checkpoints as before
 * (`onFailure` is told why, once).
 */
export class BackgroundCheckpoints {
  private readonly worker: Worker;
  private stopping = false;
  private failed = false;

  constructor(
    private readonly sqlite: SqliteDatabase.Database,
    file: string,
    busyTimeoutMs: number,
    private readonly onFailure: (reason: string) => void,
    entry: CheckpointWorkerEntry = CHECKPOINT_WORKER,
  ) {
    sqlite.pragma(`wal_autocheckpoint = ${GUARD_CHECKPOINT_PAGES}`);
    const workerData: CheckpointWorkerData = { file, busyTimeoutMs, activeMs: PASS_MS, idleMs: IDLE_MS };
    this.worker = new Worker(entry.url, { workerData, execArgv: entry.execArgv ?? [], resourceLimits: { maxOldGenerationSizeMb: 32 } });
    // The thread never keeps the process alive: a service that stops closes it, and SQLite's last connection checkpoints.
    this.worker.unref();
    this.worker.on('error', (error) => this.fail(error.message));
    this.worker.on('exit', (code) => this.fail(`its thread exited (code ${code})`));
  }

  /**
   * Ends the thread, before the writing connection closes: its connection is closed with it
   * (better-sqlite3 closes a thread's databases when the thread ends, a pass under way first), so
   * the writing connection is the last and removes the WAL.
   */
  async stop(): Promise<void> {
    if (this.stopping || this.failed) return;
    this.stopping = true;
    await this.worker.terminate();
  }

  private fail(reason: string): void {
    if (this.stopping || this.failed) return;
    this.failed = true;
    try {
      this.sqlite.pragma(`wal_autocheckpoint = ${INLINE_CHECKPOINT_PAGES}`);
    } catch {
      // The connection is closed: nothing is written any more.
    }
    this.onFailure(reason);
  }
}
