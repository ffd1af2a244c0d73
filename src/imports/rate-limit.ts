/**
 * A per-import limit on calls to the tool: at most `perSecond`, evenly spaced (no burst), so an
 * import of a long history never floods the tool's API. Only one import of an integration runs at
 * a time across the cluster (the `imports_one_active` index), so the limit of the import is the
 * integration's.
 */
export class RateLimiter {
  private next = 0;
  private readonly spacingMs: number;

  constructor(perSecond: number, private readonly clock: () => number = Date.now) {
    this.spacingMs = 1000 / perSecond;
  }

  /** Resolves when the next call may go; rejects when `signal` aborts first. */
  async take(signal?: AbortSignal): Promise<void> {
    const now = this.clock();
    const at = Math.max(now, this.next);
    this.next = at + this.spacingMs;
    const wait = at - now;
    if (wait <= 0) return;
    await new Promise<void>((resolve, reject) => {
      const timer = setTimeout(done, wait);
      function done() {
        signal?.removeEventListener('abort', aborted);
        resolve();
      }
      function aborted() {
        clearTimeout(timer);
        reject(signal!.reason as Error);
      }
      if (signal?.aborted) return aborted();
      signal?.addEventListener('abort', aborted, { once: true });
    });
  }
}
