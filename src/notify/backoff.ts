/**
 * How long to wait before the next try of a delivery after `failures` failed ones: exponential
 * from `baseMs`, capped at `maxMs`, with the upper half random ("equal jitter") so that many
 * deliveries failing together (a receiver down) do not all come back at the same moment.
 * A receiver's Retry-After is honoured when it asks for longer.
 */
export function backoffMs(failures: number, baseMs: number, maxMs: number, retryAfterMs = 0, random = Math.random()): number {
  const exponential = Math.min(maxMs, baseMs * 2 ** Math.max(0, failures - 1));
  const jittered = exponential / 2 + random * (exponential / 2);
  return Math.round(Math.max(jittered, Math.min(retryAfterMs, maxMs)));
}
