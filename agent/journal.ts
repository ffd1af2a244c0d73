import { readFileSync } from 'node:fs';
import { mkdir, open, readdir, readFile, rename, rm } from 'node:fs/promises';
import { join } from 'node:path';
import type { ExecutionResult } from '../src/agents/protocol.js';
import { fileNameFor } from './names.js';
import { signalGroup } from './process-group.js';

/*
 * The agent's journal: one small file per execution in <state-dir>/journal, each replaced
 * atomically (write, fsync, rename, fsync the directory). It is what makes the crash semantics
 * hold: a run is recorded as starting before its process exists, so a run that was under way
 * when the agent died is found at the next start and reported, never run again.
 */

export type JournalEntry =
  | { executionId: string; state: 'starting'; at: number; bootId: string }
  | { executionId: string; state: 'running'; at: number; bootId: string; pgid: number }
  | { executionId: string; state: 'finished'; at: number; result: ExecutionResult }
  | { executionId: string; state: 'interrupted'; at: number; reason: string }
  /** The service has it (a recorded result or a reported interruption): kept only to spot duplicates. */
  | { executionId: string; state: 'acknowledged'; at: number };

export interface Interrupted {
  executionId: string;
  reason: string;
}

const TOMBSTONE_MS = 24 * 60 * 60 * 1000;
/** An undelivered result or interruption is dropped after a week: the service has long given up on it. */
const UNDELIVERED_MS = 7 * 24 * 60 * 60 * 1000;

interface Pending {
  entry: JournalEntry;
  waiters: Array<{ resolve(): void; reject(error: unknown): void }>;
}

export class Journal {
  private readonly entries = new Map<string, JournalEntry>();
  private writes: Promise<void> = Promise.resolve();
  private readonly pending = new Map<string, Pending>();
  private flushing: Promise<void> | undefined;

  private constructor(
    private readonly dir: string,
    private readonly bootId: string,
  ) {}

  /**
   * Opens the journal. Every run it shows as starting or running belongs to an agent process that
   * is gone: its surviving process group is killed and it becomes `interrupted`.
   */
  static async open(dir: string, now = Date.now()): Promise<Journal> {
    await mkdir(dir, { recursive: true, mode: 0o700 });
    const journal = new Journal(dir, currentBootId());
    for (const name of await readdir(dir)) {
      if (name.endsWith('.tmp')) await rm(join(dir, name), { force: true });
      if (!name.endsWith('.json')) continue;
      const entry = parseEntry(await readFile(join(dir, name), 'utf8'));
      if (entry) journal.entries.set(entry.executionId, entry);
    }
    for (const entry of [...journal.entries.values()]) {
      if (entry.state === 'starting' || entry.state === 'running') await journal.interrupt(entry, now);
    }
    await journal.purge(now);
    return journal;
  }

  get(executionId: string): JournalEntry | undefined {
    return this.entries.get(executionId);
  }

  /** Recorded durably before the process is spawned. */
  starting(executionId: string): Promise<void> {
    return this.put({ executionId, state: 'starting', at: Date.now(), bootId: this.bootId });
  }

  running(executionId: string, pgid: number): Promise<void> {
    return this.put({ executionId, state: 'running', at: Date.now(), bootId: this.bootId, pgid });
  }

  finished(result: ExecutionResult): Promise<void> {
    return this.put({ executionId: result.executionId, state: 'finished', at: Date.now(), result });
  }

  acknowledged(executionId: string): Promise<void> {
    if (!this.entries.has(executionId)) return this.flushing ?? this.writes;
    return this.put({ executionId, state: 'acknowledged', at: Date.now() });
  }

  /** Results the service has not yet said it recorded, oldest first. */
  undeliveredResults(): ExecutionResult[] {
    return this.list('finished').map((entry) => entry.result);
  }

  /** Interruptions not yet reported to a service that answered. */
  interruptions(): Interrupted[] {
    return this.list('interrupted').map(({ executionId, reason }) => ({ executionId, reason }));
  }

  /** Drops tombstones after 24 h and undelivered entries after a week. */
  async purge(now = Date.now()): Promise<void> {
    for (const entry of [...this.entries.values()]) {
      const age = now - entry.at;
      if ((entry.state === 'acknowledged' && age > TOMBSTONE_MS) || ((entry.state === 'finished' || entry.state === 'interrupted') && age > UNDELIVERED_MS)) {
        this.entries.delete(entry.executionId);
        await this.enqueue(() => rm(this.pathOf(entry.executionId), { force: true }));
      }
    }
  }

  private async interrupt(entry: Extract<JournalEntry, { state: 'starting' | 'running' }>, now: number): Promise<void> {
    let reason = 'the agent stopped while it was starting the script; it was not re-run';
    if (entry.state === 'running') {
      // A process group id from another boot may belong to anything by now: leave it alone.
      const killed = entry.bootId === this.bootId && signalGroup(entry.pgid, 'SIGKILL');
      reason = `the agent stopped while the script ran (pid/pgid ${entry.pgid}); it was not re-run${killed ? '; its remaining processes were killed' : ''}`;
    }
    await this.put({ executionId: entry.executionId, state: 'interrupted', at: now, reason });
  }

  private list<S extends JournalEntry['state']>(state: S): Extract<JournalEntry, { state: S }>[] {
    return [...this.entries.values()].filter((e): e is Extract<JournalEntry, { state: S }> => e.state === state).sort((a, b) => a.at - b.at);
  }

  /**
   * Updates memory at once; settles once the entry is on disk. Entries waiting together are
   * written together (group commit): their files concurrently, then one directory sync. Measured
   * reason: one entry at a time, each a chain of five file operations waiting on a busy event
   * loop, held every run ~300 ms before it started (bench/e2e). Per execution the order holds:
   * a newer entry waits for the group writing the older one.
   */
  private put(entry: JournalEntry): Promise<void> {
    this.entries.set(entry.executionId, entry);
    return new Promise((resolve, reject) => {
      const waiting = this.pending.get(entry.executionId);
      if (waiting) {
        waiting.entry = entry;
        waiting.waiters.push({ resolve, reject });
      } else {
        this.pending.set(entry.executionId, { entry, waiters: [{ resolve, reject }] });
      }
      this.flushing ??= this.flush();
    });
  }

  private async flush(): Promise<void> {
    await this.writes;
    while (this.pending.size > 0) {
      const group = [...this.pending.values()];
      this.pending.clear();
      try {
        await Promise.all(group.map(({ entry }) => this.writeFile(entry)));
        await syncDirectory(this.dir);
        for (const { waiters } of group) for (const waiter of waiters) waiter.resolve();
      } catch (error) {
        for (const { waiters } of group) for (const waiter of waiters) waiter.reject(error);
      }
    }
    this.flushing = undefined;
  }

  private enqueue(write: () => Promise<void>): Promise<void> {
    const next = this.writes.then(write);
    this.writes = next.catch(() => undefined);
    return next;
  }

  /** Write, sync, rename: the file is replaced atomically; the directory sync follows per group. */
  private async writeFile(entry: JournalEntry): Promise<void> {
    const path = this.pathOf(entry.executionId);
    const temporary = `${path}.tmp`;
    const handle = await open(temporary, 'w', 0o600);
    try {
      await handle.writeFile(JSON.stringify(entry));
      await handle.sync();
    } finally {
      await handle.close();
    }
    await rename(temporary, path);
  }

  private pathOf(executionId: string): string {
    return join(this.dir, `${fileNameFor(executionId)}.json`);
  }
}

function parseEntry(text: string): JournalEntry | undefined {
  try {
    const value = JSON.parse(text) as JournalEntry;
    return typeof value.executionId === 'string' && typeof value.at === 'number' ? value : undefined;
  } catch {
    return undefined;
  }
}

/** Makes renames durable: the directory entries themselves must reach the disk. */
async function syncDirectory(dir: string): Promise<void> {
  const handle = await open(dir, 'r');
  try {
    await handle.sync();
  } finally {
    await handle.close();
  }
}

function currentBootId(): string {
  try {
    return readFileSync('/proc/sys/kernel/random/boot_id', 'utf8').trim();
  } catch {
    return 'unknown';
  }
}
