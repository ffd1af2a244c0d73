import http from 'node:http';
import type { AddressInfo } from 'node:net';
import { afterAll } from 'vitest';

export interface Received {
  path: string;
  headers: http.IncomingHttpHeaders;
  raw: string;
  body: unknown;
  /** The status this receiver answered; 0 while it holds the request unanswered (hangNext). */
  status: number;
}

export interface Receiver {
  url: string;
  /** Every request, in order, whatever was answered. */
  requests: Received[];
  /** The requests answered 2xx: what the platform would have shown. */
  accepted(): Received[];
  /** Answers the next `n` requests with `status` (and `body`) before answering normally again. */
  failNext(n: number, status: number, body?: string, headers?: Record<string, string>): void;
  /** Answers every request with `status` until told otherwise. */
  answer(status: number, body?: string): void;
  /** Reads the next `n` requests whole and never answers them (a receiver that hangs); close() drops them. */
  hangNext(n: number): void;
  close(): Promise<void>;
}

const open = new Set<Receiver>();
afterAll(async () => {
  await Promise.all([...open].map((r) => r.close()));
});

/**
 * A local stand-in for a chat platform's incoming webhook: records what pitcrew posts and answers
 * as told, with a `check` that refuses (400) a payload the platform would refuse.
 */
export async function startReceiver(check: (body: unknown, headers: http.IncomingHttpHeaders, raw: string) => string | undefined = () => undefined): Promise<Receiver> {
  const requests: Received[] = [];
  let failures: Array<{ status: number; body: string; headers: Record<string, string> }> = [];
  let fixed: { status: number; body: string; headers: Record<string, string> } | undefined;
  let hangs = 0;
  const server = http.createServer((request, response) => {
    let raw = '';
    request.setEncoding('utf8');
    request.on('data', (chunk: string) => (raw += chunk));
    request.on('end', () => {
      let body: unknown;
      try {
        body = JSON.parse(raw);
      } catch {
        body = undefined;
      }
      if (hangs > 0) {
        hangs -= 1;
        requests.push({ path: request.url ?? '', headers: request.headers, raw, body, status: 0 });
        return;
      }
      const planned = failures.shift() ?? fixed;
      const problem = planned ? undefined : check(body, request.headers, raw);
      const status = planned?.status ?? (problem ? 400 : 200);
      requests.push({ path: request.url ?? '', headers: request.headers, raw, body, status });
      response.writeHead(status, { 'content-type': 'text/plain', ...planned?.headers });
      response.end(planned?.body ?? problem ?? 'ok');
    });
  });
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  const { port } = server.address() as AddressInfo;
  const receiver: Receiver = {
    url: `http://127.0.0.1:${port}`,
    requests,
    accepted: () => requests.filter((r) => r.status >= 200 && r.status < 300),
    failNext: (n, status, body = 'try later', headers = {}) => {
      failures = Array.from({ length: n }, () => ({ status, body, headers }));
    },
    answer: (status, body = 'no') => {
      fixed = status >= 200 && status < 300 ? undefined : { status, body, headers: {} };
    },
    hangNext: (n) => {
      hangs = n;
    },
    close: () => {
      open.delete(receiver);
      server.closeAllConnections();
      return new Promise((resolve) => server.close(() => resolve()));
    },
  };
  open.add(receiver);
  return receiver;
}
