import { createHmac, randomBytes, timingSafeEqual } from 'node:crypto';

// RFC 6238 with the parameters every authenticator app uses: HMAC-SHA1, 6 digits, 30 s steps.
const STEP_MS = 30_000;
const DIGITS = 6;
const BASE32 = 'ABCDEFGHIJKLMNOPQRSTUVWXYZ234567';

export function newTotpSecret(): string {
  return base32(randomBytes(20));
}

/** The code for the step holding `at` (RFC 4226 section 5.3: dynamic truncation). */
export function totpCode(secret: string, at: number): string {
  const counter = Buffer.alloc(8);
  counter.writeBigUInt64BE(BigInt(Math.floor(at / STEP_MS)));
  const mac = createHmac('sha1', fromBase32(secret)).update(counter).digest();
  const offset = mac[mac.length - 1]! & 0x0f;
  const value = (mac.readUInt32BE(offset) & 0x7fffffff) % 10 ** DIGITS;
  return String(value).padStart(DIGITS, '0');
}

/** Accepts the current step's code and its neighbours' (clocks drift; a person types slowly). */
export function totpMatches(secret: string, code: string, now: number): boolean {
  const given = Buffer.from(code.replace(/\s/g, ''));
  return [-1, 0, 1].some((step) => {
    const expected = Buffer.from(totpCode(secret, now + step * STEP_MS));
    return expected.length === given.length && timingSafeEqual(expected, given);
  });
}

/** What an authenticator app scans (Key Uri Format, as Google Authenticator documents it). */
export function totpUri(secret: string, account: string, issuer = 'pitcrew'): string {
  return `otpauth://totp/${encodeURIComponent(issuer)}:${encodeURIComponent(account)}?secret=${secret}&issuer=${encodeURIComponent(issuer)}&algorithm=SHA1&digits=${DIGITS}&period=${STEP_MS / 1000}`;
}

function base32(bytes: Buffer): string {
  let bits = 0;
  let value = 0;
  let out = '';
  for (const byte of bytes) {
    value = (value << 8) | byte;
    bits += 8;
    while (bits >= 5) {
      out += BASE32[(value >>> (bits - 5)) & 31];
      bits -= 5;
    }
  }
  return bits > 0 ? out + BASE32[(value << (5 - bits)) & 31] : out;
}

function fromBase32(text: string): Buffer {
  const bytes: number[] = [];
  let bits = 0;
  let value = 0;
  for (const char of text.toUpperCase().replace(/=+$/, '')) {
    value = (value << 5) | BASE32.indexOf(char);
    bits += 5;
    if (bits >= 8) {
      bytes.push((value >>> (bits - 8)) & 0xff);
      bits -= 8;
    }
  }
  return Buffer.from(bytes);
}
