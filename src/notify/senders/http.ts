import http from 'node:http';
import https from 'node:https';
import { EGRESS_REFUSED, type EgressPolicy } from '../../egress/policy.js';
import { scrub, type SendResult } from './result.js';

const MAX_RETRY_AFTER_MS = 15 * 60_000;
/** Enough of a refusal's body to explain it; the rest is not read. */
const MAX_ANSWER_BYTES = 16 * 1024;

/**
 * POSTs JSON to a receiver. 2xx is delivered. 408, 429 and 5xx are worth another try (a
 * Retry-After is honoured); other 4xx will not heal by waiting (a removed webhook, a payload the
 * platform refuses) and end the delivery. Redirects are not followed: they could carry the payload
 * to another host. Only addresses the egress policy permits are connected to. Errors name the
 * host, never the URL (it holds tokens).
 */
export function postJson(url: string, body: unknown, headers: Record<string, string>, options: { timeoutMs: number; egress: EgressPolicy }, secrets: readonly string[], rawBody?: string): Promise<SendResult> {
  let target: URL;
  try {
    target = new URL(url);
  } catch {
    return Promise.resolve({ ok: false, status: null, error: 'the receiver URL is not a valid URL', retryable: false });
  }
  if (target.protocol !== 'https:' && target.protocol !== 'http:') {
    return Promise.resolve({ ok: false, status: null, error: `the receiver URL must be http or https, not ${target.protocol}`, retryable: false });
  }
  const refused = options.egress.refusesHost(target.hostname);
  if (refused) return Promise.resolve({ ok: false, status: null, error: `not sent: ${refused}`, retryable: false });
  const payload = Buffer.from(rawBody ?? JSON.stringify(body));
  const client = target.protocol === 'https:' ? https : http;
  return new Promise((resolve) => {
    let settled = false;
    const settle = (result: SendResult) => {
      if (settled) return;
      settled = true;
      clearTimeout(timer);
      resolve(result);
    };
    const request = client.request(target, {
      method: 'POST',
      headers: { 'content-type': 'application/json', 'content-length': String(payload.length), 'user-agent': 'pitcrew-notify/1', ...headers },
      lookup: options.egress.lookup,
    }, (response) => {
      const chunks: Buffer[] = [];
      let kept = 0;
      response.on('data', (chunk: Buffer) => {
        if (kept < MAX_ANSWER_BYTES) chunks.push(chunk);
        kept += chunk.length;
      });
      response.on('end', () => settle(answered(target.host, response, Buffer.concat(chunks).subarray(0, MAX_ANSWER_BYTES).toString('utf8'), secrets)));
      response.on('error', (error) => settle(unreachable(target.host, error, secrets)));
    });
    const timer = setTimeout(() => {
      settle({ ok: false, status: null, error: scrub(`could not deliver to ${target.host}: no answer within ${options.timeoutMs} ms`, secrets), retryable: true });
      request.destroy();
    }, options.timeoutMs);
    request.on('error', (error) => settle(unreachable(target.host, error, secrets)));
    request.end(payload);
  });
}

function answered(host: string, response: http.IncomingMessage, text: string, secrets: readonly string[]): SendResult {
  const code = response.statusCode ?? 0;
  const status = `HTTP ${code}`;
  if (code >= 200 && code < 300) return { ok: true, status };
  const excerpt = text ? `: ${JSON.stringify(scrub(text, secrets))}` : '';
  const error = `${host} answered ${code} ${response.statusMessage ?? ''}${excerpt}`.replace(/ {2,}/g, ' ').trim();
  if (code >= 300 && code < 400) {
    return { ok: false, status, error: `${error}; a redirect is not followed, configure the final URL`, retryable: false };
  }
  const retryable = code === 408 || code === 429 || code >= 500;
  const retryAfterMs = retryAfter(response.headers['retry-after']);
  // The excerpt is scrubbed already; the host is not secret.
  return { ok: false, status, error, retryable, ...(retryAfterMs === undefined ? {} : { retryAfterMs }) };
}

function unreachable(host: string, error: NodeJS.ErrnoException, secrets: readonly string[]): SendResult {
  if (error.code === EGRESS_REFUSED) return { ok: false, status: null, error: `not sent: ${error.message}`, retryable: false };
  return { ok: false, status: null, error: scrub(`could not deliver to ${host}: ${error.code ?? error.message}`, secrets), retryable: true };
}

/** Retry-After as seconds or an HTTP date (RFC 9110 §10.2.3), bounded. */
function retryAfter(value: string | undefined): number | undefined {
  if (!value) return undefined;
  const ms = /^\d+$/.test(value.trim()) ? Number(value) * 1000 : Date.parse(value) - Date.now();
  return Number.isFinite(ms) && ms > 0 ? Math.min(ms, MAX_RETRY_AFTER_MS) : undefined;
}
