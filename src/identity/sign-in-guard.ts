/**
 * Brakes on guessing passwords. Per account, in the database so every node of a cluster agrees:
 * after ACCOUNT_FAILURES failures in a row the account is locked for LOCK_MS (a right password
 * then fails too). Per address, in this process: ADDRESS_FAILURES failures within LOCK_MS and that
 * address is refused for the rest of the window, whichever accounts it tries.
 */
export const ACCOUNT_FAILURES = 5;
export const ADDRESS_FAILURES = 20;
export const LOCK_MS = 15 * 60_000;

export class AddressBrake {
  private readonly failures = new Map<string, number[]>();

  /** Milliseconds until the address may try again; 0 when it may now. */
  waitFor(ip: string, now: number): number {
    const recent = this.recent(ip, now);
    return recent.length >= ADDRESS_FAILURES ? recent[0]! + LOCK_MS - now : 0;
  }

  failed(ip: string, now: number): void {
    const recent = this.recent(ip, now);
    recent.push(now);
    this.failures.set(ip, recent);
    if (this.failures.size > 10_000) this.forgetOld(now);
  }

  private recent(ip: string, now: number): number[] {
    return (this.failures.get(ip) ?? []).filter((at) => now - at < LOCK_MS);
  }

  private forgetOld(now: number): void {
    for (const [ip, times] of this.failures) if (times.every((at) => now - at >= LOCK_MS)) this.failures.delete(ip);
  }
}

/** The account's state after one more failure: locked once it reaches ACCOUNT_FAILURES. */
export function afterFailure(failedLogins: number, now: number): { failed_logins: number; locked_until: number | null } {
  const failed = failedLogins + 1;
  return failed >= ACCOUNT_FAILURES ? { failed_logins: 0, locked_until: now + LOCK_MS } : { failed_logins: failed, locked_until: null };
}
