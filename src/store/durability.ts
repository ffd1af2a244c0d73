import fs from 'node:fs';
import { CompiledQuery } from 'kysely';

/**
 * How a group-commit transaction becomes durable. Its statements wrap the transaction's begin,
 * commit and rollback; `flush()` resolves once every commit so far is on disk. Replies and
 * dispatches wait for `flush()`, never for less.
 */
export interface Durability {
  begin: CompiledQuery[];
  commit: CompiledQuery[];
  rollback: CompiledQuery[];
  /** Around a Kysely transaction (store/durable-transaction.ts): before it, its commit stops syncing; after it, commits sync again. */
  relax: CompiledQuery[];
  restore: CompiledQuery[];
  flush(): Promise<void>;
  /** Releases what flushing holds (the WAL's descriptor); called when the store closes. */
  close(): void;
}

/** PostgreSQL: a commit is durable when the server answers it. */
export const serverDurability: Durability = {
  begin: [CompiledQuery.raw('begin')],
  commit: [CompiledQuery.raw('commit')],
  rollback: [CompiledQuery.raw('rollback')],
  relax: [],
  restore: [],
  flush: () => Promise.resolve(),
  close: () => undefined,
};

/**
 * SQLite: the group commit's COMMIT runs with synchronous=NORMAL (the WAL is written, not
 * synced) and the WAL is then synced with fdatasync on libuv's thread pool. Same guarantee as
 * synchronous=FULL for what we acknowledge, but the ~3 ms sync no longer holds the event loop:
 * it held it for 28 % of the ingest benchmark's time (bench/, BENCH_CPU_PROF=1). Every other
 * write keeps synchronous=FULL. SQLite keeps the database consistent under NORMAL by itself (it
 * syncs the WAL before each checkpoint); the flush adds the durability of each acknowledged commit.
 */
export function walDurability(walPath: string): Durability {
  const flusher = new WalFlusher(walPath);
  const relax = CompiledQuery.raw('pragma synchronous = NORMAL');
  const restore = CompiledQuery.raw('pragma synchronous = FULL');
  return {
    begin: [relax, CompiledQuery.raw('begin')],
    commit: [CompiledQuery.raw('commit'), restore],
    rollback: [CompiledQuery.raw('rollback'), restore],
    relax: [relax],
    restore: [restore],
    flush: () => flusher.flush(),
    close: () => flusher.close(),
  };
}

/**
 * Syncs the WAL for each flush, at once. A sync in progress may have begun before the caller's
 * commit, so callers never share one; syncs overlap instead (the disk orders them: 8 KiB appends
 * synced one at a time took 0.20 ms each here, four at a time 0.08 ms). Waiting for the sync in
 * progress before starting the next, and opening and closing the file around each sync, cost
 * three trips through the busy event loop per commit: ingest commits took ~10 ms for a 0.2 ms sync.
 */
export class WalFlusher {
  private fd: number | undefined;

  constructor(
    private readonly walPath: string,
    private readonly sync: (fd: number) => Promise<void> = datasync,
  ) {}

  flush(): Promise<void> {
    let fd: number;
    try {
      // Opened once, on the first flush (the WAL exists from the first commit). SQLite keeps the
      // file while a connection is open; it deletes it only when the last one closes.
      fd = this.fd ??= fs.openSync(this.walPath, 'r');
    } catch (error) {
      return Promise.reject(error as Error);
    }
    return this.sync(fd).catch((error: unknown) => {
      // A failed sync may leave the descriptor in doubt (EIO): the next flush opens the file afresh.
      if (this.fd === fd) this.close();
      throw error;
    });
  }

  /** Releases the descriptor; a later flush opens it again. */
  close(): void {
    if (this.fd === undefined) return;
    const fd = this.fd;
    this.fd = undefined;
    fs.close(fd, () => undefined);
  }
}

function datasync(fd: number): Promise<void> {
  return new Promise((resolve, reject) => fs.fdatasync(fd, (error) => (error ? reject(error) : resolve())));
}
