import http from 'node:http';
import https from 'node:https';
import type { EgressPolicy } from './policy.js';

/** What pitcrew asks of a tenant's service (Keystone, Monasca): a fetch, under the egress policy. */
export type PolicyFetch = (url: string, init: { method: string; headers: Record<string, string>; body?: string; signal?: AbortSignal }) => Promise<Response>;

/** More than any answer pitcrew reads of a tenant's service; past it the call fails instead of filling memory. */
const MAX_ANSWER_BYTES = 8 * 1024 * 1024;

/**
 * A fetch that connects only where the egress policy permits (policy.ts: a tenant-configured URL
 * must not reach the service's own network), follows no redirect, and reads at most 8 MiB. The
 * global fetch takes no `lookup`, so the policy could not be applied at connect time there.
 */
export function policyFetch(policy: EgressPolicy): PolicyFetch {
  return (url, init) => new Promise((resolve, reject) => {
    const target = new URL(url);
    const refused = policy.refusesHost(target.hostname);
    if (refused) return reject(new Error(refused));
    const client = target.protocol === 'https:' ? https : target.protocol === 'http:' ? http : undefined;
    if (!client) return reject(new Error(`${target.protocol} is not http or https`));
    const request = client.request(target, { method: init.method, headers: init.headers, lookup: policy.lookup, signal: init.signal }, (response) => {
      const chunks: Buffer[] = [];
      let size = 0;
      response.on('data', (chunk: Buffer) => {
        size += chunk.length;
        if (size > MAX_ANSWER_BYTES) {
          request.destroy(new Error(`the answer is over ${MAX_ANSWER_BYTES} bytes`));
          return;
        }
        chunks.push(chunk);
      });
      response.on('error', reject);
      response.on('end', () => {
        const headers = new Headers();
        for (const [name, value] of Object.entries(response.headers)) {
          for (const one of Array.isArray(value) ? value : value === undefined ? [] : [value]) headers.append(name, one);
        }
        const status = response.statusCode ?? 502;
        const nullBody = status === 204 || status === 304;
        resolve(new Response(nullBody ? null : Buffer.concat(chunks), { status, statusText: response.statusMessage ?? '', headers }));
      });
    });
    request.on('error', reject);
    request.end(init.body);
  });
}
