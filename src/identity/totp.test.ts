import { describe, expect, it } from 'vitest';
import { totpCode, totpMatches, newTotpSecret } from './totp.js';

describe('TOTP (RFC 6238)', () => {
  // RFC 6238 Appendix B, SHA1 rows: the secret is ASCII "12345678901234567890"; the RFC shows 8
  // digits, of which the 6-digit code is the last six.
  const RFC_SECRET = 'GEZDGNBVGY3TQOJQGEZDGNBVGY3TQOJQ';
  it.each([
    [59_000, '287082'],
    [1_111_111_109_000, '081804'],
    [1_234_567_890_000, '005924'],
    [20_000_000_000_000, '353130'],
  ])('at %i ms the code is %s', (at, code) => {
    expect(totpCode(RFC_SECRET, at)).toBe(code);
  });

  it('accepts the neighbouring steps and nothing further', () => {
    const secret = newTotpSecret();
    const now = 1_700_000_000_000;
    expect(totpMatches(secret, totpCode(secret, now - 30_000), now)).toBe(true);
    expect(totpMatches(secret, totpCode(secret, now + 30_000), now)).toBe(true);
    expect(totpMatches(secret, totpCode(secret, now - 90_000), now)).toBe(false);
    expect(totpMatches(secret, '12345', now)).toBe(false);
  });
});
