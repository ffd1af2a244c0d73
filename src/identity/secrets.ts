import { hash, randomBytes, timingSafeEqual } from 'node:crypto';

/** A tenant API key: 256 random bits as 64 lowercase hex characters (it travels in webhook URLs). */
export function generateApiKey(): string {
  return randomBytes(32).toString('hex');
}

/** A management token; the prefix lets secret scanners and people recognise it. */
export function generateToken(): string {
  return `pct_${randomBytes(32).toString('hex')}`;
}

export const API_KEY_PATTERN = /^[0-9a-fA-F]{64}$/;

/** Secrets are high-entropy, so a fast SHA-256 is enough: there is nothing to brute-force. */
export function hashSecret(secret: string): string {
  return hash('sha256', secret.toLowerCase(), 'hex');
}

/** Constant-time comparison of a presented secret with a stored hash. */
export function secretMatches(secret: string, storedHash: string): boolean {
  const presented = Buffer.from(hashSecret(secret), 'hex');
  const stored = Buffer.from(storedHash, 'hex');
  return presented.length === stored.length && timingSafeEqual(presented, stored);
}
