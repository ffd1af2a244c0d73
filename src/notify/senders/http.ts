import { scrub, type SendResult } from './result.js';

const MAX_RETRY_AFTER_MS = 15 * 60_000;

/**
 * POSTs JSON to a receiver. 2xx is delivered. 408, 429 and 5xx are worth another try (a
 * Retry-After is honoured); other 4xx will not heal by waiting (a removed webhook, a payload the
 * platform refuses) and end the delivery. Errors name the host, never the URL (it holds tokens).
 */
export async function postJson(url: string, body: unknown, headers: Record<string, string>, timeoutMs: number, secrets: readonly string[], rawBody?: string): Promise<SendResult> {
  const host = safeHost(url);
  let response: Response;
  try {
    response = await fetch(url, {
      method: 'POST',
      headers: { 'content-type': 'application/json', 'user-agent': 'pitcrew-notify/1', ...headers },
      body: rawBody ?? JSON.stringify(body),
      // A redirect could carry the payload to another host: receivers are configured by their final URL.
      redirect: 'manual',
      signal: AbortSignal.timeout(timeoutMs),
    });
  } catch (error) {
    const reason = (error as Error).name === 'TimeoutError' ? `no answer within ${timeoutMs} ms` : networkReason(error);
    return { ok: false, status: null, error: scrub(`could not deliver to ${host}: ${reason}`, secrets), retryable: true };
  }
  const text = await response.text().catch(() => '');
  const status = `HTTP ${response.status}`;
  if (response.status >= 200 && response.status < 300) return { ok: true, status };
  const excerpt = text ? `: ${JSON.stringify(scrub(text, secrets))}` : '';
  const error = `${host} answered ${response.status} ${response.statusText}${excerpt}`.trim();
  if (response.status >= 300 && response.status < 400) {
    return { ok: false, status, error: `${error}; a redirect is not followed, configure the final URL`, retryable: false };
  }
  const retryable = response.status === 408 || response.status === 429 || response.status >= 500;
  const retryAfterMs = retryAfter(response.headers.get('retry-after'));
  // The excerpt is scrubbed already; the host is not secret.
  return { ok: false, status, error, retryable, ...(retryAfterMs === undefined ? {} : { retryAfterMs }) };
}

function safeHost(url: string): string {
  try {
    return new URL(url).host;
  } catch {
    return 'the receiver';
  }
}

function networkReason(error: unknown): string {
  const cause = (error as { cause?: { code?: string; message?: string } }).cause;
  return cause?.code ?? cause?.message ?? (error as Error).message;
}

/** Retry-After as seconds or an HTTP date (RFC 9110 §10.2.3), bounded. */
function retryAfter(value: string | null): number | undefined {
  if (!value) return undefined;
  const ms = /^\d+$/.test(value.trim()) ? Number(value) * 1000 : Date.parse(value) - Date.now();
  return Number.isFinite(ms) && ms > 0 ? Math.min(ms, MAX_RETRY_AFTER_MS) : undefined;
}
