import { once } from 'node:events';
import { Worker } from 'node:worker_threads';
import type SqliteDatabase from 'better-sqlite3';
import type { CheckpointDone, CheckpointMessage, CheckpointWorkerData } from './checkpoint-worker.js';

/** Where the checkpointer thread's code is: the built checkpoint-worker.js beside this file, unless a test runs the sources. */
export interface CheckpointWorkerEntry {
  url: URL;
  execArgv?: string[];
}

export const CHECKPOINT_WORKER: CheckpointWorkerEntry = { url: new URL('./checkpoint-worker.js', import.meta.url) };

/** SQLite's own automatic checkpoint threshold, kept: a WAL of this many uncopied pages is checkpointed. */
export const CHECKPOINT_PAGES = 1000;
/** The writer's own automatic checkpoint, left on at this size: the WAL stays bounded if the thread falls behind or is gone. */
export const BACKSTOP_PAGES = 4 * CHECKPOINT_PAGES;
/** Commits between two looks at the WAL (a group commit writes a few to a few dozen pages). */
const COMMITS_PER_LOOK = 16;

/**
 * Checkpoints the WAL off the event loop. SQLite's automatic checkpoint runs inside the COMMIT
 * that takes the WAL past 1,000 pages, on the thread that commits: on the service's event loop,
 * with the WAL's sync, the copy of its pages into the database and the database's sync (COMMIT
 * was 43 % of the group commits' statement time in bench/'s cold burst). Here a thread with a
 * connection of its own copies every 1,000 frames, asked to look after every few commits. A WAL
 * starts over only when a write begins with every frame copied, which a copy beside a busy writer
 * seldom leaves, so the writer keeps its automatic checkpoint at BACKSTOP_PAGES: it then copies
 * what is left (under 1,000 frames, not 4,000) and the WAL starts over; it also bounds the WAL if
 * the thread falls behind, and goes back to SQLite's default if the thread fails. The durability
 * of commits does not change: it is the WAL's sync (store/durability.ts), and a checkpoint copies
 * only what the WAL holds, syncing the WAL first.
 */
export class WalCheckpointer {
  private worker: Worker | undefined;
  private failed = false;
  private commits = 0;

  constructor(
    private readonly sqlite: SqliteDatabase.Database,
    private readonly file: string,
    private readonly entry: CheckpointWorkerEntry = CHECKPOINT_WORKER,
    /** Told what each of the thread's checkpoints did (tests). */
    private readonly onCheckpoint: (done: CheckpointDone) => void = () => undefined,
  ) {
    sqlite.pragma(`wal_autocheckpoint = ${BACKSTOP_PAGES}`);
  }

  /** Told of each group commit; the thread starts on the first look, so short-lived stores never start it. */
  committed(): void {
    this.commits += 1;
    if (this.failed || this.commits % COMMITS_PER_LOOK !== 0) return;
    this.post('look');
  }

  async close(): Promise<void> {
    const worker = this.worker;
    this.worker = undefined;
    this.failed = true;
    if (!worker) return;
    const exited = once(worker, 'exit');
    worker.ref();
    worker.postMessage('close' satisfies CheckpointMessage);
    await exited;
  }

  private post(message: CheckpointMessage): void {
    this.worker ??= this.start();
    this.worker.postMessage(message);
  }

  private start(): Worker {
    const data: CheckpointWorkerData = { file: this.file, pages: CHECKPOINT_PAGES };
    const worker = new Worker(this.entry.url, { workerData: data, execArgv: this.entry.execArgv ?? [] });
    // Never keeps the process alive; close() ends it before the store's connection closes.
    worker.unref();
    worker.on('error', () => this.fail());
    worker.on('message', (done: CheckpointDone) => this.onCheckpoint(done));
    return worker;
  }

  /** The writer checkpoints for itself again, as SQLite does by default. */
  private fail(): void {
    this.failed = true;
    this.worker = undefined;
    if (this.sqlite.open) this.sqlite.pragma(`wal_autocheckpoint = ${CHECKPOINT_PAGES}`);
  }
}
