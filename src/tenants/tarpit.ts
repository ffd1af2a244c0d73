/**
 * Holds a throttled call's 429 for a moment before sending it. A flooding client with keep-alive
 * connections can only send its next call after the reply, so each held reply takes one call per
 * connection per delay off the flood, and the CPU that answering it would have cost goes to the
 * other tenants (bench/isolation.js measured it). The number held per tenant is bounded; past it,
 * 429s go out at once.
 */
export class Tarpit {
  private readonly held = new Map<string, number>();

  constructor(
    private readonly delayMs: number,
    private readonly maxHeldPerTenant = 1000,
  ) {}

  async hold(tenantId: string, retryAfterSeconds: number): Promise<void> {
    const count = this.held.get(tenantId) ?? 0;
    if (this.delayMs <= 0 || count >= this.maxHeldPerTenant) return;
    this.held.set(tenantId, count + 1);
    try {
      await new Promise((resolve) => setTimeout(resolve, Math.min(this.delayMs, retryAfterSeconds * 1000)));
    } finally {
      const left = (this.held.get(tenantId) ?? 1) - 1;
      if (left === 0) this.held.delete(tenantId);
      else this.held.set(tenantId, left);
    }
  }
}
