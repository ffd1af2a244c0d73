import type { PolicyFetch } from '../egress/fetch.js';
import type { ImportNeeds } from '../integrations/import-needs.js';
import { shownUrl, ToolImportError } from '../integrations/tool-api.js';
import type { RateLimiter } from './rate-limit.js';

/** How long one call to a tool may take before the import gives up on it. */
const CALL_TIMEOUT_MS = 30_000;

/**
 * The fetch an importer is given: the service's egress policy (a tenant's URL may not reach the
 * service's own network, egress/policy.ts), the import's rate limit, a timeout per call, and
 * read-only: a GET or HEAD goes; anything else only when the tool says it reads
 * (ImportNeeds.readOnlyCall: Keystone's token request, a JSON-RPC `.get`); every other call is
 * refused here, before it leaves, and fails the import with that reason.
 */
export function importFetch(base: PolicyFetch, needs: ImportNeeds, limiter: RateLimiter, onCall?: () => void): PolicyFetch {
  return async (url, init) => {
    const method = init.method.toUpperCase();
    if (method !== 'GET' && method !== 'HEAD' && !needs.readOnlyCall?.(method, new URL(url), init.body, init.headers)) {
      throw new ToolImportError(`pitcrew did not send ${method} ${shownUrl(url)}: an import only reads from ${needs.tool} (GET, or the tool's read-only calls)`);
    }
    await limiter.take(init.signal);
    onCall?.();
    const timeout = AbortSignal.timeout(CALL_TIMEOUT_MS);
    return base(url, { ...init, signal: init.signal ? AbortSignal.any([init.signal, timeout]) : timeout });
  };
}
