/**
 * Reconnection delays, with full jitter: each delay is random between 0 and a ceiling, so that
 * the agents of a fleet cut off together (a service restart) come back spread over that ceiling
 * and not in step. An agent cannot know the fleet's size, so the ceiling adapts instead:
 *
 * - It starts small (the base): one agent, or a fleet whose service is back at once, reconnects
 *   within a fraction of a second.
 * - Each failed attempt doubles it. A failure that reached the service (a timeout, a refusal, a
 *   dropped handshake) is the sign of a loaded service: up to the cap, the fleet's arrival rate
 *   (fleet size ÷ ceiling) halves with each failure until the service keeps up.
 * - A refused connection (nothing listens: the service is restarting) costs the service nothing,
 *   so it doubles the ceiling only up to `refusedCapMs`: when the service is back, every agent
 *   comes within that much, however long the restart took, instead of after a ceiling grown to
 *   30 s by the outage. The service takes hellos as fast as they come (src/agents/gateway.ts).
 */
export class Backoff {
  private attempt = 0;

  constructor(
    private readonly baseMs = 500,
    private readonly capMs = 30_000,
    private readonly random: () => number = Math.random,
    private readonly refusedCapMs = 4_000,
  ) {}

  /** The delay before the next attempt; each call doubles the ceiling, up to the cap for this kind of failure. */
  next(failure: 'refused' | 'other' = 'other'): number {
    const cap = failure === 'refused' ? Math.min(this.refusedCapMs, this.capMs) : this.capMs;
    const ceiling = Math.min(cap, this.baseMs * 2 ** Math.min(this.attempt, 30));
    this.attempt++;
    return Math.floor(this.random() * ceiling);
  }

  /** After a connection that stayed up: start again from the base delay. */
  reset(): void {
    this.attempt = 0;
  }
}
