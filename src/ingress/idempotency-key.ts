import { PitcrewError } from '../errors/catalogue.js';

export const IDEMPOTENCY_KEY_HEADER = 'idempotency-key';
export const MAX_IDEMPOTENCY_KEY_LENGTH = 255;

// Printable ASCII: what HTTP header values carry safely and what people paste (UUIDs, alert ids).
const KEY_PATTERN = /^[\x20-\x7e]+$/;

/**
 * The optional Idempotency-Key header (IETF draft-ietf-httpapi-idempotency-key-header): a string,
 * sent bare or as a structured-field string in double quotes. Undefined when absent.
 */
export function readIdempotencyKey(value: string | string[] | undefined): string | undefined {
  if (value === undefined) return undefined;
  const raw = Array.isArray(value) ? value.join(', ') : value;
  const quoted = /^"(.*)"$/.exec(raw.trim());
  const key = (quoted ? quoted[1]! : raw).trim();
  if (key.length === 0 || key.length > MAX_IDEMPOTENCY_KEY_LENGTH || !KEY_PATTERN.test(key)) {
    const message = `Idempotency-Key must be 1 to ${MAX_IDEMPOTENCY_KEY_LENGTH} printable ASCII characters, such as a UUID or the alert's own id`;
    throw new PitcrewError('PITCREW_ERR_VALIDATION', message, { fieldErrors: [{ path: `/headers/${IDEMPOTENCY_KEY_HEADER}`, message }] });
  }
  return key;
}
