export class GroupCommitOverloadedError extends Error {}

/**
 * Group commit: jobs submitted while a transaction runs are committed together in the next one,
 * so one disk sync (and one round of queries) serves many callers. Each caller's promise settles
 * after the transaction holding its job committed, or rejects if it failed.
 */
export class GroupCommit<Job, Result> {
  private queue: Array<{ job: Job; resolve(result: Result): void; reject(error: unknown): void }> = [];
  private flushing = false;
  private scheduled = false;
  private idle: Array<() => void> = [];

  constructor(
    private readonly commit: (jobs: Job[]) => Promise<Result[]>,
    private readonly limits: { maxBatch: number; maxQueued: number; name: string },
    private readonly observe: (batchSize: number, seconds: number) => void = () => undefined,
  ) {}

  submit(job: Job): Promise<Result> {
    if (this.queue.length >= this.limits.maxQueued) {
      return Promise.reject(new GroupCommitOverloadedError(`${this.limits.name} queue is full (${this.limits.maxQueued} waiting for storage)`));
    }
    return new Promise((resolve, reject) => {
      this.queue.push({ job, resolve, reject });
      this.schedule();
    });
  }

  /** Resolves once everything submitted so far is committed or failed. */
  drain(): Promise<void> {
    if (!this.flushing && !this.scheduled && this.queue.length === 0) return Promise.resolve();
    return new Promise((resolve) => this.idle.push(resolve));
  }

  private schedule(): void {
    if (this.flushing || this.scheduled) return;
    this.scheduled = true;
    // setImmediate lets every job submitted in this turn of the event loop join the batch.
    setImmediate(() => {
      this.scheduled = false;
      void this.flush();
    });
  }

  private async flush(): Promise<void> {
    this.flushing = true;
    while (this.queue.length > 0) {
      const batch = this.queue.splice(0, this.limits.maxBatch);
      const started = performance.now();
      try {
        const results = await this.commit(batch.map((entry) => entry.job));
        batch.forEach((entry, i) => entry.resolve(results[i]!));
        this.observe(batch.length, (performance.now() - started) / 1000);
      } catch (error) {
        for (const entry of batch) entry.reject(error);
      }
    }
    this.flushing = false;
    for (const resolve of this.idle.splice(0)) resolve();
  }
}
