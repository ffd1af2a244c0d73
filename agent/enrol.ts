import { request as httpRequest, type IncomingMessage } from 'node:http';
import { request as httpsRequest } from 'node:https';
import type { TlsOptions } from './tls.js';

export interface HostDescription {
  hostname: string;
  tags: string[];
  os: string;
  arch: string;
  version: string;
  /** This machine's instance id at its cloud (agent/cloud-instance.ts), said in the hello. */
  cloudInstanceId?: string;
}

export interface Enrolment {
  hostId: string;
  tenantId: string;
  token: string;
}

/** The service said no (a bad key, a host name taken: its detail says what to do): asking again will not help. */
export class EnrolmentRefused extends Error {}

const TIMEOUT_MS = 30_000;
const MAX_BODY = 64 * 1024;

/**
 * Trades the tenant API key for this agent's own credential: POST /api/v1/agents/enrol. With
 * `replace`, it takes over an existing host of the same name.
 */
export async function enrol(server: URL, apiKey: string, host: HostDescription, tls: TlsOptions, replace = false): Promise<Enrolment> {
  const url = endpoint(server, 'api/v1/agents/enrol');
  // The instance id goes in the hello, which every service version takes; enrolment's body is strict.
  const { cloudInstanceId: _reportedInHello, ...facts } = host;
  const body = JSON.stringify(replace ? { ...facts, replace } : facts);
  const { status, text } = await post(url, body, { authorization: `Bearer ${apiKey}`, 'content-type': 'application/json' }, tls);
  if (status === 201) {
    const reply = parseJson(text) as Partial<Enrolment> | undefined;
    if (typeof reply?.hostId === 'string' && typeof reply.tenantId === 'string' && typeof reply.token === 'string' && reply.token) {
      return { hostId: reply.hostId, tenantId: reply.tenantId, token: reply.token };
    }
    throw new Error('the enrolment reply lacks hostId, tenantId or token; is --server the pitcrew service?');
  }
  const detail = problemDetail(text) ?? `HTTP ${status}`;
  if (status >= 400 && status < 500 && status !== 408 && status !== 429) {
    throw new EnrolmentRefused(`the service refused the enrolment (HTTP ${status}): ${detail}`);
  }
  throw new Error(`enrolment failed (HTTP ${status}): ${detail}`);
}

/** A service path under --server, keeping any path prefix it has (a reverse proxy's). */
export function endpoint(server: URL, path: string): URL {
  const base = new URL(server.href);
  if (!base.pathname.endsWith('/')) base.pathname += '/';
  return new URL(path, base);
}

function post(url: URL, body: string, headers: Record<string, string>, tls: TlsOptions): Promise<{ status: number; text: string }> {
  return new Promise((resolve, reject) => {
    const request = url.protocol === 'https:' ? httpsRequest : httpRequest;
    // agent: false: no pooled socket and no TLS session reuse (a resumed session skips checkServerIdentity).
    const req = request(url, { method: 'POST', headers: { ...headers, 'content-length': Buffer.byteLength(body) }, agent: false, timeout: TIMEOUT_MS, ...tls }, (res) => {
      readBody(res).then((text) => resolve({ status: res.statusCode ?? 0, text }), reject);
    });
    req.on('timeout', () => req.destroy(new Error(`no reply from ${url.origin} within ${TIMEOUT_MS / 1000} s`)));
    req.on('error', reject);
    req.end(body);
  });
}

export function readBody(res: IncomingMessage): Promise<string> {
  return new Promise((resolve, reject) => {
    const chunks: Buffer[] = [];
    let size = 0;
    res.on('data', (chunk: Buffer) => {
      size += chunk.length;
      if (size <= MAX_BODY) chunks.push(chunk);
    });
    res.on('end', () => resolve(Buffer.concat(chunks).toString('utf8')));
    res.on('error', reject);
  });
}

/** The `detail` of an application/problem+json body, if it is one. */
export function problemDetail(text: string): string | undefined {
  const problem = parseJson(text) as { detail?: unknown; title?: unknown } | undefined;
  const detail = problem?.detail ?? problem?.title;
  return typeof detail === 'string' ? detail : undefined;
}

function parseJson(text: string): unknown {
  try {
    return JSON.parse(text);
  } catch {
    return undefined;
  }
}
