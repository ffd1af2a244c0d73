import { createHmac } from 'node:crypto';

/** Header names of the generic webhook (docs/notifications.md shows how to verify them). */
export const SIGNATURE_HEADER = 'x-pitcrew-signature';
export const TIMESTAMP_HEADER = 'x-pitcrew-timestamp';
export const DELIVERY_HEADER = 'x-pitcrew-delivery';

/**
 * HMAC-SHA256 over `<timestamp>.<raw body>` with the channel's secret, as `v1=<hex>`. The
 * timestamp is signed with the body, so a receiver that refuses old timestamps (5 minutes)
 * also refuses a captured request played again later.
 */
export function signature(secret: string, timestamp: number, rawBody: string): string {
  return `v1=${createHmac('sha256', secret).update(`${timestamp}.${rawBody}`).digest('hex')}`;
}

export function signedHeaders(secret: string, rawBody: string, deliveryId: string, now = Date.now()): Record<string, string> {
  const timestamp = Math.floor(now / 1000);
  return {
    [TIMESTAMP_HEADER]: String(timestamp),
    [SIGNATURE_HEADER]: signature(secret, timestamp, rawBody),
    [DELIVERY_HEADER]: deliveryId,
  };
}
