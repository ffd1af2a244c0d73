import { writeSync } from 'node:fs';
import { mkdir, open, readFile, rename, rm, type FileHandle } from 'node:fs/promises';
import { join } from 'node:path';
import type { ExecutionResult } from '../src/agents/protocol.js';
import { currentBootId, processStart, signalGroup, UNKNOWN_BOOT } from './process-group.js';

/*
 * The agent's journal: an append-only log, <state-dir>/journal/journal.log, one JSON line per
 * entry, the last line of an execution id winning. It is what makes the crash semantics hold: a
 * run is recorded as starting, on disk, before its process exists, so a run that was under way
 * when the agent died is found at the next start and reported, never run again.
 *
 * Entries waiting together are appended with one write and, when one of them must survive a
 * power cut, one fdatasync (group commit). Measured reason: a file per entry (write, fsync,
 * rename, directory fsync) cost ~20 thread-pool operations per execution, and the pool, not the
 * CPU, capped one agent at ~115 executions/s (bench/e2e, the agent 71 % idle).
 */

export type JournalEntry =
  | { executionId: string; state: 'starting'; at: number; bootId: string }
  | { executionId: string; state: 'running'; at: number; bootId: string; pgid: number; leaderStart?: string }
  | { executionId: string; state: 'finished'; at: number; result: ExecutionResult }
  | { executionId: string; state: 'interrupted'; at: number; reason: string }
  /** The service has it (a recorded result or a reported interruption): kept only to spot duplicates. */
  | { executionId: string; state: 'acknowledged'; at: number };

export interface Interrupted {
  executionId: string;
  reason: string;
}

const LOG = 'journal.log';
const TOMBSTONE_MS = 24 * 60 * 60 * 1000;
/**
 * At most this many tombstones, the oldest forgotten first: ~20 MB of memory whatever the rate
 * (at ten runs a second, 24 h of them would be 864,000). The service never sends an execution it
 * has recorded again, so a tombstone only guards against a delivery already under way.
 */
const MAX_TOMBSTONES = 100_000;
/** An undelivered result or interruption is dropped after a week: the service has long given up on it. */
const UNDELIVERED_MS = 7 * 24 * 60 * 60 * 1000;
/** The log is rewritten with only the live entries once it holds this many lines more than them. */
const COMPACT_SLACK = 10_000;

/**
 * Which entries must be on disk before the journal answers. `starting` guards at most once across
 * a power cut; a result and an interruption are owed to the service. `running` only serves to
 * kill an orphaned process group within the same boot, and a lost tombstone leaves the older
 * entry, which is as good, so both reach the OS and nothing more.
 */
const MUST_SYNC: Readonly<Record<JournalEntry['state'], boolean>> = {
  starting: true,
  running: false,
  finished: true,
  interrupted: true,
  acknowledged: false,
};

interface Pending {
  entry: JournalEntry;
  resolve(): void;
  reject(error: unknown): void;
}

export interface JournalOptions {
  maxTombstones?: number;
  /** This boot's id; read from the kernel unless given (tests). */
  bootId?: string;
}

export { UNKNOWN_BOOT };

export class Journal {
  private readonly entries = new Map<string, JournalEntry>();
  /** The ids of `acknowledged` entries, oldest first. */
  private readonly tombstones = new Set<string>();
  private pending: Pending[] = [];
  private flushing: Promise<void> | undefined;
  private lines = 0;
  /** A failed append may have left half a line: the next one starts on a line of its own. */
  private torn = false;

  private constructor(
    private readonly dir: string,
    private readonly bootId: string,
    private log: FileHandle,
    private readonly maxTombstones: number,
  ) {}

  /**
   * Opens the journal. Every run it shows as starting or running belongs to an agent process that
   * is gone: its surviving process group is killed and it becomes `interrupted`.
   */
  static async open(dir: string, now = Date.now(), options: JournalOptions = {}): Promise<Journal> {
    await mkdir(dir, { recursive: true, mode: 0o700 });
    const entries = await readEntries(join(dir, LOG));
    const journal = new Journal(dir, options.bootId ?? currentBootId(), await open(join(dir, LOG), 'a', 0o600), options.maxTombstones ?? MAX_TOMBSTONES);
    for (const entry of [...entries.values()].sort((a, b) => a.at - b.at)) journal.remember(entry);
    journal.drop(now);
    await journal.compact();
    for (const entry of [...journal.entries.values()]) {
      if (entry.state === 'starting' || entry.state === 'running') await journal.interrupt(entry, now);
    }
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
    return this.put({ executionId, state: 'running', at: Date.now(), bootId: this.bootId, pgid, leaderStart: processStart(pgid) });
  }

  finished(result: ExecutionResult): Promise<void> {
    return this.put({ executionId: result.executionId, state: 'finished', at: Date.now(), result });
  }

  acknowledged(executionId: string): Promise<void> {
    if (!this.entries.has(executionId)) return this.flushing ?? Promise.resolve();
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

  /** Drops tombstones after 24 h and undelivered entries after a week; the log forgets them at its next rewrite. */
  async purge(now = Date.now()): Promise<void> {
    this.drop(now);
    await (this.flushing ?? Promise.resolve());
  }

  async close(): Promise<void> {
    await (this.flushing ?? Promise.resolve());
    await this.log.close();
  }

  private drop(now: number): void {
    for (const entry of [...this.entries.values()]) {
      const age = now - entry.at;
      if ((entry.state === 'acknowledged' && age > TOMBSTONE_MS) || ((entry.state === 'finished' || entry.state === 'interrupted') && age > UNDELIVERED_MS)) {
        this.entries.delete(entry.executionId);
        this.tombstones.delete(entry.executionId);
      }
    }
  }

  /** Holds an entry in memory; past the tombstone cap, the oldest tombstone is forgotten. */
  private remember(entry: JournalEntry): void {
    this.entries.set(entry.executionId, entry);
    if (entry.state !== 'acknowledged') return;
    this.tombstones.add(entry.executionId);
    if (this.tombstones.size <= this.maxTombstones) return;
    const oldest = this.tombstones.values().next().value!;
    this.tombstones.delete(oldest);
    this.entries.delete(oldest);
  }

  private async interrupt(entry: Extract<JournalEntry, { state: 'starting' | 'running' }>, now: number): Promise<void> {
    let reason = 'the agent stopped while it was starting the script; it was not re-run';
    if (entry.state === 'running') {
      const killed = this.isStillTheRun(entry) && signalGroup(entry.pgid, 'SIGKILL');
      reason = `the agent stopped while the script ran (pid/pgid ${entry.pgid}); it was not re-run${killed ? '; its remaining processes were killed' : ''}`;
    }
    await this.put({ executionId: entry.executionId, state: 'interrupted', at: now, reason });
  }

  /**
   * Whether the process group a dead agent recorded can still be its run's. Pids start over at boot,
   * and within a boot a pid is free for reuse once its group is gone (pid_max is 32768 on many
   * hosts): a group whose leader is a process started at another time is someone else's.
   */
  private isStillTheRun(entry: Extract<JournalEntry, { state: 'running' }>): boolean {
    if (this.bootId === UNKNOWN_BOOT || entry.bootId !== this.bootId) return false;
    const leader = processStart(entry.pgid);
    return entry.leaderStart === undefined || leader === undefined || leader === entry.leaderStart;
  }

  private list<S extends JournalEntry['state']>(state: S): Extract<JournalEntry, { state: S }>[] {
    return [...this.entries.values()].filter((e): e is Extract<JournalEntry, { state: S }> => e.state === state).sort((a, b) => a.at - b.at);
  }

  /** Updates memory at once; settles once the entry is in the log (and on disk if it must be). */
  private put(entry: JournalEntry): Promise<void> {
    this.remember(entry);
    return new Promise((resolve, reject) => {
      this.pending.push({ entry, resolve, reject });
      this.flushing ??= this.flush();
    });
  }

  private async flush(): Promise<void> {
    // Let every entry put in this turn of the event loop join the group.
    await new Promise((resolve) => setImmediate(resolve));
    while (this.pending.length > 0) {
      const group = this.pending;
      this.pending = [];
      try {
        this.append(group.map(({ entry }) => `${JSON.stringify(entry)}\n`).join(''));
        this.lines += group.length;
        if (group.some(({ entry }) => MUST_SYNC[entry.state])) await this.log.datasync();
        if (this.lines > this.entries.size + COMPACT_SLACK) await this.compact();
        for (const waiter of group) waiter.resolve();
      } catch (error) {
        for (const waiter of group) waiter.reject(error);
      }
    }
    this.flushing = undefined;
  }

  /** A small append to the page cache: cheaper on the event loop than a trip to the thread pool. */
  private append(text: string): void {
    const bytes = Buffer.from(this.torn ? `\n${text}` : text);
    this.torn = true;
    for (let written = 0; written < bytes.length; ) written += writeSync(this.log.fd, bytes, written);
    this.torn = false;
  }

  /** Rewrites the log with the live entries only: write, sync, rename, sync the directory. */
  private async compact(): Promise<void> {
    const path = join(this.dir, LOG);
    const temporary = `${path}.tmp`;
    const handle = await open(temporary, 'w', 0o600);
    try {
      await handle.writeFile([...this.entries.values()].map((entry) => `${JSON.stringify(entry)}\n`).join(''));
      await handle.sync();
    } finally {
      await handle.close();
    }
    await rename(temporary, path);
    await syncDirectory(this.dir);
    await this.log.close();
    this.log = await open(path, 'a', 0o600);
    this.lines = this.entries.size;
  }
}

/** The last entry of each id; a line a crash left half-written (only the last can be) is skipped. */
async function readEntries(path: string): Promise<Map<string, JournalEntry>> {
  const entries = new Map<string, JournalEntry>();
  const text = await readFile(path, 'utf8').catch((error: NodeJS.ErrnoException) => {
    if (error.code === 'ENOENT') return '';
    throw error;
  });
  await rm(`${path}.tmp`, { force: true });
  for (const line of text.split('\n')) {
    const entry = parseEntry(line);
    if (entry) entries.set(entry.executionId, entry);
  }
  return entries;
}

function parseEntry(text: string): JournalEntry | undefined {
  if (text === '') return undefined;
  try {
    const value = JSON.parse(text) as JournalEntry;
    return typeof value.executionId === 'string' && typeof value.at === 'number' ? value : undefined;
  } catch {
    return undefined;
  }
}

/** Makes the rename durable: the directory entry itself must reach the disk. */
async function syncDirectory(dir: string): Promise<void> {
  const handle = await open(dir, 'r');
  try {
    await handle.sync();
  } finally {
    await handle.close();
  }
}
