import { createHmac, timingSafeEqual } from 'node:crypto';

/*
 * How Slack signs the requests it sends an app (docs.slack.dev/authentication/verifying-requests-from-slack):
 * X-Slack-Signature is "v0=" and the hex HMAC-SHA256, under the app's signing secret, of
 * "v0:{X-Slack-Request-Timestamp}:{the raw body}"; a timestamp more than five minutes from now is
 * refused, so a captured request cannot be played again later.
 */

export const SIGNATURE_HEADER = 'x-slack-signature';
export const TIMESTAMP_HEADER = 'x-slack-request-timestamp';
const MAX_SKEW_SECONDS = 5 * 60;

export function slackSignature(signingSecret: string, timestamp: string, rawBody: string): string {
  return `v0=${createHmac('sha256', signingSecret).update(`v0:${timestamp}:${rawBody}`).digest('hex')}`;
}

/** Why a request's timestamp is refused, or null when it is within five minutes of now. */
export function staleTimestamp(timestamp: string | undefined, nowMs: number): string | null {
  if (!timestamp || !/^\d{1,12}$/.test(timestamp)) return 'the request has no X-Slack-Request-Timestamp';
  const skew = Math.abs(nowMs / 1000 - Number(timestamp));
  return skew > MAX_SKEW_SECONDS ? `its X-Slack-Request-Timestamp is ${Math.round(skew)} s from this server's clock (more than 5 minutes): an old request played again, or a clock to set right` : null;
}

/** The index of the signing secret the request was signed with, compared in constant time; -1 for none. */
export function signedWith(signingSecrets: readonly string[], timestamp: string, rawBody: string, signature: string | undefined): number {
  if (!signature) return -1;
  const given = Buffer.from(signature);
  return signingSecrets.findIndex((secret) => {
    const expected = Buffer.from(slackSignature(secret, timestamp, rawBody));
    return expected.length === given.length && timingSafeEqual(expected, given);
  });
}
