/**
 * How one try of a send ended. `status` is short and safe to show: "HTTP 500", "SMTP 535". `ref`:
 * where a chat message landed (Slack's {channel, ts}, a Teams card's conversation and activity),
 * kept in notify_deliveries.message_ref (migration 0036) to update it later.
 */
export type SendResult =
  | { ok: true; status: string | null; ref?: object }
  | { ok: false; status: string | null; error: string; retryable: boolean; retryAfterMs?: number };

const EXCERPT_CHARS = 200;

/**
 * Text from a receiver or a library, made safe to store and show: the channel's secrets (a token
 * in a webhook URL, a password) replaced, control characters removed, cut short.
 */
export function scrub(text: string, secrets: readonly string[]): string {
  let safe = text;
  for (const secret of secrets) if (secret.length >= 4) safe = safe.split(secret).join('[secret]');
  // eslint-disable-next-line no-control-regex
  safe = safe.replace(/[\u0000-\u0008\u000b-\u001f\u007f]/g, ' ').replace(/\s+/g, ' ').trim();
  return safe.length > EXCERPT_CHARS ? `${safe.slice(0, EXCERPT_CHARS)}…` : safe;
}
