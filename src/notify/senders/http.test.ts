import http from 'node:http';
import type { AddressInfo } from 'node:net';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { EgressPolicy } from '../../egress/policy.js';
import { postJson } from './http.js';

describe('postJson', () => {
  const loopback = { timeoutMs: 2000, egress: new EgressPolicy(['127.0.0.0/8']) };
  const closed = { timeoutMs: 2000, egress: new EgressPolicy([]) };
  let server: http.Server;
  let base = '';
  const bodies: string[] = [];

  beforeAll(async () => {
    server = http.createServer((request, response) => {
      let body = '';
      request.on('data', (chunk: Buffer) => (body += chunk.toString()));
      request.on('end', () => {
        bodies.push(body);
        if (request.url === '/moved') return void response.writeHead(301, { location: 'http://elsewhere.example/' }).end();
        if (request.url === '/busy') return void response.writeHead(503, { 'retry-after': '7' }).end('try later, token=s3cret-token');
        response.writeHead(200).end('ok');
      });
    });
    await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
    base = `http://127.0.0.1:${(server.address() as AddressInfo).port}`;
  });
  afterAll(() => new Promise<void>((resolve) => server.close(() => resolve())));

  it('delivers JSON to a receiver the policy permits', async () => {
    expect(await postJson(`${base}/hook`, { text: 'hi' }, {}, loopback, [])).toEqual({ ok: true, status: 'HTTP 200' });
    expect(bodies.at(-1)).toBe('{"text":"hi"}');
  });

  it('retries a 503 after its Retry-After, and shows its answer with the secrets taken out', async () => {
    expect(await postJson(`${base}/busy`, {}, {}, loopback, ['s3cret-token'])).toEqual({
      ok: false, status: 'HTTP 503', retryable: true, retryAfterMs: 7000, error: `127.0.0.1:${new URL(base).port} answered 503 Service Unavailable: "try later, token=[secret]"`,
    });
  });

  it('does not follow a redirect', async () => {
    expect(await postJson(`${base}/moved`, {}, {}, loopback, [])).toMatchObject({ ok: false, retryable: false, error: expect.stringMatching(/a redirect is not followed/) });
  });

  it('refuses what it must not call, before any connection: another scheme, a bad URL, a refused address', async () => {
    const before = bodies.length;
    expect(await postJson('ftp://files.example/x', {}, {}, loopback, [])).toMatchObject({ ok: false, retryable: false, error: 'the receiver URL must be http or https, not ftp:' });
    expect(await postJson('not a url', {}, {}, loopback, [])).toMatchObject({ ok: false, retryable: false, error: 'the receiver URL is not a valid URL' });
    expect(await postJson(`${base}/hook`, {}, {}, closed, [])).toMatchObject({ ok: false, retryable: false, error: expect.stringMatching(/^not sent: 127.0.0.1 is a private, loopback or link-local address/) });
    expect(bodies.length).toBe(before);
  });
});
