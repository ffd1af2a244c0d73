/**
 * Reconnection delays: exponential with full jitter (a random delay between 0 and the current
 * ceiling), so that many agents cut off by one service restart do not come back in step.
 */
export class Backoff {
  private attempt = 0;

  constructor(
    private readonly baseMs = 500,
    private readonly capMs = 30_000,
    private readonly random: () => number = Math.random,
  ) {}

  /** The delay before the next attempt; each call doubles the ceiling up to the cap. */
  next(): number {
    const ceiling = Math.min(this.capMs, this.baseMs * 2 ** Math.min(this.attempt, 30));
    this.attempt++;
    return Math.floor(this.random() * ceiling);
  }

  /** After a connection that stayed up: start again from the base delay. */
  reset(): void {
    this.attempt = 0;
  }
}
