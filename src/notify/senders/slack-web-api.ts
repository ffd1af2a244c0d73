import type { EgressPolicy } from '../../egress/policy.js';
import { policyFetch } from '../../egress/fetch.js';
import { scrub, type SendResult } from './result.js';

/** Slack's Web API, unless the operator points it elsewhere (PITCREW_SLACK_API_URL: a proxy, a test's emulator). */
export const SLACK_API_URL = 'https://slack.com/api';

/** How pitcrew reaches Slack: the Web API's base, under the service's egress policy, within a time limit. */
export interface SlackReach {
  apiUrl: string;
  egress: EgressPolicy;
  timeoutMs: number;
}

/** Where a message landed (chat.postMessage's answer): kept in notify_deliveries.message_ref to update it later. */
export interface SlackMessageRef {
  channel: string;
  ts: string;
}

export type SlackAnswer = { ok: true; body: Record<string, unknown> } | { ok: false; result: Extract<SendResult, { ok: false }> };

/**
 * Slack's errors that a later try may heal (docs.slack.dev/apis/web-api, "Rate limits" and each
 * method's error list: ratelimited, internal_error, fatal_error, service_unavailable,
 * request_timeout); every other error (invalid_auth, not_in_channel, channel_not_found,
 * missing_scope, token_revoked, message_not_found…) needs a person to change a setting.
 */
const PASSING_ERRORS = new Set(['ratelimited', 'internal_error', 'fatal_error', 'service_unavailable', 'request_timeout']);

/** What an error asks of the person who set the channel up, for the errors a misconfigured app gives. */
const HINTS: Record<string, string> = {
  not_in_channel: 'invite the Slack app to the channel (/invite @your-app)',
  channel_not_found: "check the channel's channelId (the C… id in the channel's details), and that the app is in it",
  invalid_auth: 'the bot token is not valid: paste the Bot User OAuth Token (xoxb-…) again',
  token_revoked: 'the bot token was revoked: reinstall the app and paste its new token',
  not_authed: 'no bot token was sent',
  missing_scope: 'add the missing scope to the app (chat:write, users:read, users:read.email) and reinstall it',
  user_not_found: 'Slack does not know this user',
};

/**
 * Calls a Web API method with the bot token in the Authorization header, as Slack asks
 * (docs.slack.dev/authentication/tokens: "Bearer xoxb-…"), a JSON body for the write methods
 * (chat.postMessage, chat.update accept application/json) and a query for the reads (users.info
 * takes GET). Slack answers HTTP 200 with {"ok": false, "error": "…"} for a refusal, 429 with
 * Retry-After when rate limited. Errors name the method and Slack's error code, never the token.
 */
export async function callSlack(reach: SlackReach, token: string, method: string, args: Record<string, unknown>, read = false): Promise<SlackAnswer> {
  const query = read ? `?${new URLSearchParams(Object.entries(args).map(([k, v]): [string, string] => [k, String(v)])).toString()}` : '';
  const init: { method: string; headers: Record<string, string>; body?: string } = read
    ? { method: 'GET', headers: { authorization: `Bearer ${token}` } }
    : { method: 'POST', headers: { authorization: `Bearer ${token}`, 'content-type': 'application/json; charset=utf-8' }, body: JSON.stringify(args) };
  return answerOf(reach, [token], `${method}`, () => policyFetch(reach.egress)(`${reach.apiUrl.replace(/\/+$/, '')}/${method}${query}`, { ...init, signal: AbortSignal.timeout(reach.timeoutMs) }));
}

/**
 * Answers an interaction through its response_url (docs.slack.dev/interactivity/handling-user-interaction,
 * "Message responses"): JSON with `replace_original` or `response_type: "ephemeral"`; no token, the
 * URL itself is the credential, valid 30 minutes for 5 answers. It answers "ok" as text, not JSON.
 */
export async function respondToSlack(reach: SlackReach, responseUrl: string, body: Record<string, unknown>): Promise<SlackAnswer> {
  return answerOf(reach, [responseUrl], 'response_url', () => policyFetch(reach.egress)(responseUrl, {
    method: 'POST', headers: { 'content-type': 'application/json; charset=utf-8' }, body: JSON.stringify(body), signal: AbortSignal.timeout(reach.timeoutMs),
  }), false);
}

async function answerOf(reach: SlackReach, secrets: string[], what: string, call: () => Promise<Response>, json = true): Promise<SlackAnswer> {
  const host = hostOf(reach.apiUrl);
  let response: Response;
  try {
    response = await call();
  } catch (error) {
    const cause = (error as Error).name === 'TimeoutError' ? `no answer within ${reach.timeoutMs} ms` : (error as NodeJS.ErrnoException).code ?? (error as Error).message;
    return { ok: false, result: { ok: false, status: null, error: scrub(`could not call Slack's ${what} at ${host}: ${cause}`, secrets), retryable: true } };
  }
  const text = await response.text();
  const status = `HTTP ${response.status}`;
  if (response.status === 429 || response.status >= 500) {
    const retryAfter = Number(response.headers.get('retry-after'));
    return { ok: false, result: { ok: false, status, error: `Slack's ${what} answered ${response.status}`, retryable: true, ...(retryAfter > 0 ? { retryAfterMs: Math.min(retryAfter, 900) * 1000 } : {}) } };
  }
  if (response.status !== 200) return { ok: false, result: { ok: false, status, error: scrub(`Slack's ${what} answered ${response.status}: ${text}`, secrets), retryable: false } };
  if (!json) return { ok: true, body: {} };
  let body: Record<string, unknown>;
  try {
    body = JSON.parse(text) as Record<string, unknown>;
  } catch {
    return { ok: false, result: { ok: false, status, error: `Slack's ${what} answered something that is not JSON`, retryable: true } };
  }
  if (body.ok === true) return { ok: true, body };
  const code = typeof body.error === 'string' ? body.error : 'unknown_error';
  const hint = HINTS[code] ? ` (${HINTS[code]})` : '';
  return { ok: false, result: { ok: false, status, error: scrub(`Slack refused ${what}: ${code}${hint}`, secrets), retryable: PASSING_ERRORS.has(code) } };
}

function hostOf(url: string): string {
  try {
    return new URL(url).host;
  } catch {
    return 'Slack';
  }
}
