import fs from 'node:fs/promises';
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
  flush(): Promise<void>;
}

/** PostgreSQL: a commit is durable when the server answers it. */
export const serverDurability: Durability = {
  begin: [CompiledQuery.raw('begin')],
  commit: [CompiledQuery.raw('commit')],
  rollback: [CompiledQuery.raw('rollback')],
  flush: () => Promise.resolve(),
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
  return {
    begin: [CompiledQuery.raw('pragma synchronous = NORMAL'), CompiledQuery.raw('begin')],
    commit: [CompiledQuery.raw('commit'), CompiledQuery.raw('pragma synchronous = FULL')],
    rollback: [CompiledQuery.raw('rollback'), CompiledQuery.raw('pragma synchronous = FULL')],
    flush: () => flusher.flush(),
  };
}

/** One fdatasync at a time; callers arriving while one runs share the next one. */
export class WalFlusher {
  private running: Promise<void> | undefined;
  private next: Promise<void> | undefined;

  constructor(
    private readonly walPath: string,
    private readonly sync: (path: string) => Promise<void> = datasync,
  ) {}

  flush(): Promise<void> {
    if (!this.running) return this.start();
    // The sync in progress may have begun before the caller's commit: it is covered by the next.
    const startNext = () => {
      this.next = undefined;
      return this.start();
    };
    this.next ??= this.running.then(startNext, startNext);
    return this.next;
  }

  private start(): Promise<void> {
    const run: Promise<void> = this.sync(this.walPath).finally(() => {
      if (this.running === run) this.running = undefined;
    });
    this.running = run;
    return run;
  }
}

async function datasync(path: string): Promise<void> {
  // A fresh handle each time: SQLite may delete and recreate the WAL file (e.g. on last close).
  const handle = await fs.open(path, 'r');
  try {
    await handle.datasync();
  } finally {
    await handle.close();
  }
}
