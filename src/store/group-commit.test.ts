import { describe, expect, it, vi } from 'vitest';
import { GroupCommit } from './group-commit.js';

/** A commit that records its batches and makes each durable when the test says so. */
function recordingCommit() {
  const batches: number[][] = [];
  const makeDurable: Array<() => void> = [];
  const commit = async (jobs: number[]) => {
    batches.push(jobs);
    const durable = new Promise<void>((resolve) => makeDurable.push(resolve));
    return { value: jobs.map((job) => job * 10), durable };
  };
  return { batches, makeDurable, commit };
}

const turn = () => new Promise((resolve) => setImmediate(resolve));

describe('GroupCommit', () => {
  it('answers callers once their batch is durable, and commits the next batch meanwhile', async () => {
    const c = recordingCommit();
    const group = new GroupCommit(c.commit, { maxBatch: 100, maxQueued: 1000, name: 'test' });
    const answered: number[] = [];
    const first = [1, 2, 3].map((job) => group.submit(job).then((r) => answered.push(r)));
    await turn();
    expect(c.batches).toEqual([[1, 2, 3]]);
    const second = group.submit(4).then((r) => answered.push(r));
    await turn();
    await turn();
    // Batch two committed while batch one waits for its sync; nobody has been answered yet.
    expect(c.batches).toEqual([[1, 2, 3], [4]]);
    expect(answered).toEqual([]);
    c.makeDurable[0]!();
    await Promise.all(first);
    expect(answered).toEqual([10, 20, 30]);
    const drained = group.drain();
    let isDrained = false;
    void drained.then(() => (isDrained = true));
    await turn();
    expect(isDrained).toBe(false);
    c.makeDurable[1]!();
    await second;
    await drained;
    expect(answered).toEqual([10, 20, 30, 40]);
  });

  it('lets a job that may wait join the next commit, or commits it once its wait is over', async () => {
    vi.useFakeTimers();
    try {
      const c = recordingCommit();
      const group = new GroupCommit(c.commit, { maxBatch: 100, maxQueued: 1000, name: 'test' });
      void group.submit(1, 50);
      await vi.advanceTimersByTimeAsync(10);
      expect(c.batches).toEqual([]);
      void group.submit(2); // a job that may not wait starts the transaction, and takes the waiting one along
      await vi.advanceTimersByTimeAsync(0);
      expect(c.batches).toEqual([[1, 2]]);
      void group.submit(3, 50);
      await vi.advanceTimersByTimeAsync(49);
      expect(c.batches).toEqual([[1, 2]]);
      await vi.advanceTimersByTimeAsync(2);
      expect(c.batches).toEqual([[1, 2], [3]]);
      // The shortest wait of the jobs queued is the one kept.
      void group.submit(4, 50);
      void group.submit(5, 5);
      await vi.advanceTimersByTimeAsync(7);
      expect(c.batches).toEqual([[1, 2], [3], [4, 5]]);
    } finally {
      vi.useRealTimers();
    }
  });

  it('fills a batch by the size of its jobs, keeps each job whole however big, and reports the sizes', async () => {
    const batches: number[][][] = [];
    const sizes: number[] = [];
    const group = new GroupCommit(async (jobs: number[][]) => {
      batches.push(jobs);
      return { value: jobs.map((job) => job.length), durable: Promise.resolve() };
    }, { maxBatch: 4, maxQueued: 100, name: 'test', sizeOf: (job) => job.length }, (size) => sizes.push(size));
    const answers = await Promise.all([[1, 2], [3, 4], [5], [6, 7, 8, 9, 10, 11], [12]].map((job) => group.submit(job)));
    expect(answers).toEqual([2, 2, 1, 6, 1]);
    expect(batches).toEqual([[[1, 2], [3, 4]], [[5]], [[6, 7, 8, 9, 10, 11]], [[12]]]);
    expect(sizes).toEqual([4, 1, 6, 1]);
  });

  it('rejects the callers of a batch whose sync failed', async () => {
    const group = new GroupCommit(async (jobs: number[]) => ({ value: jobs, durable: Promise.reject(new Error('EIO')) }), { maxBatch: 10, maxQueued: 10, name: 'test' });
    await expect(group.submit(1)).rejects.toThrow('EIO');
    await group.drain();
  });
  it("commits each job alone after a refusal that may be one job's fault, so only that job fails", async () => {
    const batches: number[][] = [];
    const refused = Object.assign(new Error('invalid byte sequence'), { code: '22021' });
    const commit = async (jobs: number[]) => {
      batches.push(jobs);
      if (jobs.includes(13)) throw refused;
      return { value: jobs.map((job) => job * 10), durable: Promise.resolve() };
    };
    const group = new GroupCommit(commit, { maxBatch: 100, maxQueued: 1000, name: 'test', mayBeOneJob: (error) => error === refused });
    const settled = await Promise.allSettled([12, 13, 14].map((job) => group.submit(job)));
    expect(settled).toEqual([{ status: 'fulfilled', value: 120 }, { status: 'rejected', reason: refused }, { status: 'fulfilled', value: 140 }]);
    expect(batches).toEqual([[12, 13, 14], [12], [13], [14]]);
  });

  it('fails the whole batch at once for other errors (a database down is every job\'s problem)', async () => {
    const batches: number[][] = [];
    const down = new Error('connection refused');
    const group = new GroupCommit(async (jobs: number[]) => {
      batches.push(jobs);
      throw down;
    }, { maxBatch: 100, maxQueued: 1000, name: 'test', mayBeOneJob: () => false });
    const settled = await Promise.allSettled([1, 2].map((job) => group.submit(job)));
    expect(settled.map((s) => s.status)).toEqual(['rejected', 'rejected']);
    expect(batches).toEqual([[1, 2]]);
  });
});
