import type { Committed } from './batch.js';

export class GroupCommitOverloadedError extends Error {}

export interface GroupCommitLimits<Job = unknown> {
  maxBatch: number;
  maxQueued: number;
  name: string;
  /**
   * Whether a failed transaction's error may be one job's fault (the database refused values one
   * job carried): the jobs are then committed one by one, so that only the job at fault fails.
   */
  mayBeOneJob?: (error: unknown) => boolean;
  /** What a job counts for in maxBatch and the batch-size figures (1 each by default; a delivery of several events counts them). */
  sizeOf?: (job: Job) => number;
}

interface Entry<Job, Result> {
  job: Job;
  resolve(result: Result): void;
  reject(error: unknown): void;
}

/**
 * Group commit: jobs submitted while a transaction runs are committed together in the next one,
 * so one disk sync (and one round of queries) serves many callers. Each caller's promise settles
 * once the transaction holding its job is durable, or rejects if it failed. The next transaction
 * runs while the previous one is synced.
 */
export class GroupCommit<Job, Result> {
  private queue: Array<Entry<Job, Result>> = [];
  private flushing = false;
  private scheduled = false;
  /** Set while only jobs that may wait are queued: the flush they wait for at the latest, and when. */
  private waiting: NodeJS.Timeout | undefined;
  private waitingUntil = Infinity;
  private syncing = 0;
  private idle: Array<() => void> = [];

  constructor(
    private readonly commit: (jobs: Job[]) => Promise<Committed<Result[]>>,
    private readonly limits: GroupCommitLimits<Job>,
    private readonly observe: (batchSize: number, seconds: number) => void = () => undefined,
  ) {}

  /**
   * Queues a job for the next transaction. `mayWaitMs`: the job may wait that long for company
   * (a job that may not wait, or the time running out, starts the transaction), so that a fact
   * nobody waits for shares a commit instead of paying one of its own.
   */
  submit(job: Job, mayWaitMs = 0): Promise<Result> {
    if (this.queue.length >= this.limits.maxQueued) {
      return Promise.reject(new GroupCommitOverloadedError(`${this.limits.name} queue is full (${this.limits.maxQueued} waiting for storage)`));
    }
    return new Promise((resolve, reject) => {
      this.queue.push({ job, resolve, reject });
      if (mayWaitMs > 0) this.scheduleWithin(mayWaitMs);
      else this.schedule();
    });
  }

  /** Resolves once everything submitted so far is committed or failed. */
  drain(): Promise<void> {
    if (this.isIdle()) return Promise.resolve();
    return new Promise((resolve) => this.idle.push(resolve));
  }

  private schedule(): void {
    clearTimeout(this.waiting);
    this.waiting = undefined;
    this.waitingUntil = Infinity;
    if (this.flushing || this.scheduled) return;
    this.scheduled = true;
    // setImmediate lets every job submitted in this turn of the event loop join the batch.
    setImmediate(() => {
      this.scheduled = false;
      void this.flush();
    });
  }

  /** A flush within `ms` unless one comes sooner; a flush in progress takes the job anyway. */
  private scheduleWithin(ms: number): void {
    const until = performance.now() + ms;
    if (this.flushing || this.scheduled || until >= this.waitingUntil) return;
    clearTimeout(this.waiting);
    this.waitingUntil = until;
    this.waiting = setTimeout(() => this.schedule(), ms);
  }

  private async flush(): Promise<void> {
    this.flushing = true;
    while (this.queue.length > 0) await this.commitEntries(this.queue.splice(0, this.nextBatchLength()));
    this.flushing = false;
    this.settleIdle();
  }

  /** As many queued jobs as fit in maxBatch, and at least one however big. */
  private nextBatchLength(): number {
    const { sizeOf, maxBatch } = this.limits;
    if (!sizeOf) return maxBatch;
    let size = 0;
    let length = 0;
    while (length < this.queue.length && (length === 0 || size + sizeOf(this.queue[length]!.job) <= maxBatch)) {
      size += sizeOf(this.queue[length]!.job);
      length += 1;
    }
    return length;
  }

  private async commitEntries(batch: Entry<Job, Result>[]): Promise<void> {
    const started = performance.now();
    try {
      const { value: results, durable } = await this.commit(batch.map((entry) => entry.job));
      this.syncing += 1;
      void durable.then(
        () => {
          batch.forEach((entry, i) => entry.resolve(results[i]!));
          this.observe(this.sizeOfBatch(batch), (performance.now() - started) / 1000);
        },
        (error: unknown) => batch.forEach((entry) => entry.reject(error)),
      ).finally(() => {
        this.syncing -= 1;
        this.settleIdle();
      });
    } catch (error) {
      // Rolled back, so nothing of it was stored: each job again, alone, and only the faulty one fails.
      if (batch.length > 1 && this.limits.mayBeOneJob?.(error)) {
        for (const entry of batch) await this.commitEntries([entry]);
        return;
      }
      for (const entry of batch) entry.reject(error);
    }
  }

  private sizeOfBatch(batch: Array<Entry<Job, Result>>): number {
    const { sizeOf } = this.limits;
    return sizeOf ? batch.reduce((sum, entry) => sum + sizeOf(entry.job), 0) : batch.length;
  }

  private isIdle(): boolean {
    return !this.flushing && !this.scheduled && !this.waiting && this.syncing === 0 && this.queue.length === 0;
  }

  private settleIdle(): void {
    if (this.isIdle()) for (const resolve of this.idle.splice(0)) resolve();
  }
}
