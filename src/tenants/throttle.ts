import type { ThrottleSettings } from './repository.js';

// Every admitted call takes one: the same answer, not a new object each time.
const TAKEN = Object.freeze({ ok: true as const });

/** A token bucket: `burst` calls at once, refilled at `ratePerSecond`. */
export class TokenBucket {
  private tokens: number;
  private updatedAt: number;

  constructor(
    private settings: ThrottleSettings,
    now = performance.now(),
  ) {
    this.tokens = settings.burst;
    this.updatedAt = now;
  }

  reconfigure(settings: ThrottleSettings): void {
    this.settings = settings;
    this.tokens = Math.min(this.tokens, settings.burst);
  }

  /** Takes one token; when none is left, says how many whole seconds until one is. */
  take(now = performance.now()): { ok: true } | { ok: false; retryAfterSeconds: number } {
    const elapsedSeconds = Math.max(0, now - this.updatedAt) / 1000;
    this.tokens = Math.min(this.settings.burst, this.tokens + elapsedSeconds * this.settings.ratePerSecond);
    this.updatedAt = now;
    if (this.tokens >= 1) {
      this.tokens -= 1;
      return TAKEN;
    }
    return { ok: false, retryAfterSeconds: Math.max(1, Math.ceil((1 - this.tokens) / this.settings.ratePerSecond)) };
  }
}
