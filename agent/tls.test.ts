import { X509Certificate } from 'node:crypto';
import { createServer as createHttpsServer, type Server as HttpsServer } from 'node:https';
import type { AddressInfo } from 'node:net';
import { createSecureContext, createServer as createTlsServer, type Server as TlsServer, type PeerCertificate } from 'node:tls';
import selfsigned from 'selfsigned';
import { afterEach, beforeAll, describe, expect, it } from 'vitest';
import WebSocket, { WebSocketServer, type ClientOptions } from 'ws';
import { enrol } from './enrol.js';
import { normaliseFingerprint, pinCheck, ServerTrust, tlsOptionsFor, trustAdvice } from './tls.js';

interface Pair {
  key: string;
  cert: string;
  fingerprint: string;
}

/** Like the service's own (src/http/tls.ts) when `ca` is set. */
async function makeCertificate(ca: boolean): Promise<Pair> {
  const pems = await selfsigned.generate([{ name: 'commonName', value: 'localhost' }], {
    keyType: 'ec',
    algorithm: 'sha256',
    extensions: [
      ...(ca ? [{ name: 'basicConstraints' as const, cA: true }] : []),
      { name: 'subjectAltName', altNames: [{ type: 2, value: 'localhost' }, { type: 7, ip: '127.0.0.1' }] },
    ],
  });
  return { key: pems.private, cert: pems.cert, fingerprint: new X509Certificate(pems.cert).fingerprint256 };
}

const HOST = { hostname: 'web-1', tags: ['web'], os: 'Linux 6', arch: 'x64', version: '0.1.0' };
let serviceCert: Pair;
let otherCert: Pair;
const servers: (HttpsServer | TlsServer)[] = [];

beforeAll(async () => {
  [serviceCert, otherCert] = await Promise.all([makeCertificate(true), makeCertificate(false)]);
});

afterEach(async () => {
  await Promise.all(servers.splice(0).map((s) => new Promise((resolve) => s.close(resolve))));
});

async function listen<S extends HttpsServer | TlsServer>(server: S): Promise<URL> {
  servers.push(server);
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  return new URL(`https://127.0.0.1:${(server.address() as AddressInfo).port}`);
}

/** A service that enrols anyone, and counts the requests it got. */
async function enrolService(pair: Pair) {
  const seen: string[] = [];
  const server = createHttpsServer({ key: pair.key, cert: pair.cert }, (req, res) => {
    seen.push(`${req.method} ${req.url} ${req.headers.authorization}`);
    res.writeHead(201, { 'content-type': 'application/json' }).end(JSON.stringify({ hostId: 'h1', tenantId: 't1', token: 'pca_x' }));
  });
  return { url: await listen(server), seen, server };
}

/** A TLS server that records every byte a client sends after the handshake. */
async function recordingTlsServer(pair: Pair) {
  const received: Buffer[] = [];
  const closed: Promise<void>[] = [];
  const server = createTlsServer({ key: pair.key, cert: pair.cert }, (socket) => {
    socket.on('data', (chunk) => received.push(chunk));
    socket.on('error', () => undefined);
  });
  server.on('connection', (tcp) => closed.push(new Promise((resolve) => tcp.on('close', () => resolve()))));
  server.on('tlsClientError', () => undefined);
  return { url: await listen(server), received, allClosed: () => Promise.all(closed), connections: () => closed.length };
}

describe('a pinned certificate', () => {
  it.each([['a CA certificate, as the service makes', true], ['a plain self-signed certificate', false]])('connects when the server presents the pinned one: %s', async (_name, ca) => {
    const pinned = ca ? serviceCert : otherCert;
    const { url, seen } = await enrolService(pinned);
    const tls = await tlsOptionsFor(url, { kind: 'pin', fingerprint: normaliseFingerprint(pinned.fingerprint)! });
    expect(await enrol(url, 'the-api-key', HOST, tls)).toEqual({ hostId: 'h1', tenantId: 't1', token: 'pca_x' });
    expect(seen).toEqual(['POST /api/v1/agents/enrol Bearer the-api-key']);
  });

  it('refuses another certificate before sending a single byte', async () => {
    const { url, received, allClosed, connections } = await recordingTlsServer(otherCert);
    const pin = { kind: 'pin' as const, fingerprint: normaliseFingerprint(serviceCert.fingerprint)! };
    await expect(tlsOptionsFor(url, pin)).rejects.toThrow(`not the pinned ${pin.fingerprint}`);
    expect(connections()).toBe(1);
    await allClosed();
    expect(received).toEqual([]);
  });

  it('refuses another certificate on the real connection too, even with options made for the pinned one', async () => {
    const { url, received, allClosed } = await recordingTlsServer(otherCert);
    const fingerprint = normaliseFingerprint(serviceCert.fingerprint)!;
    const options = { ca: [serviceCert.cert], secureContext: createSecureContext({ ca: [serviceCert.cert] }), rejectUnauthorized: true, checkServerIdentity: pinCheck(fingerprint) };
    await expect(enrol(url, 'the-api-key', HOST, options)).rejects.toThrow();
    await allClosed();
    expect(received).toEqual([]);
  });

  it('holds for the WebSocket connection', async () => {
    const { server, url } = await enrolService(serviceCert);
    const wss = new WebSocketServer({ server });
    const headers: (string | undefined)[] = [];
    wss.on('connection', (socket, request) => {
      headers.push(request.headers.authorization);
      socket.close();
    });
    const tls = await tlsOptionsFor(url, { kind: 'pin', fingerprint: normaliseFingerprint(serviceCert.fingerprint)! });
    const client = new WebSocket(`wss://127.0.0.1:${url.port}/api/v1/agents/connect`, { headers: { authorization: 'Bearer pca_x' }, ...(tls as ClientOptions) });
    await new Promise((resolve, reject) => client.once('close', resolve).once('error', reject));
    expect(headers).toEqual(['Bearer pca_x']);
    wss.close();
  });

  it('compares fingerprints in the identity check', () => {
    const fingerprint = normaliseFingerprint(serviceCert.fingerprint)!;
    expect(pinCheck(fingerprint)('x', { fingerprint256: serviceCert.fingerprint } as PeerCertificate)).toBeUndefined();
    expect(pinCheck(fingerprint)('x', { fingerprint256: otherCert.fingerprint } as PeerCertificate)).toBeInstanceOf(Error);
  });
});

describe('a pin kept between connections', () => {
  it('fetches the chain once, connects with it again and again, and fetches again only after a certificate failure', async () => {
    const service = await recordingTlsServer(serviceCert);
    const trust = new ServerTrust(service.url, { kind: 'pin', fingerprint: normaliseFingerprint(serviceCert.fingerprint)! });
    const first = await trust.options();
    expect(await trust.options()).toBe(first);
    expect(service.connections()).toBe(1);
    // One OpenSSL context for every connection, made with the chain, not one per connection from `ca`.
    expect(first.secureContext?.context).toBeDefined();
    // A refused or dropped connection (a restarting service) keeps it: no second handshake per reconnect.
    trust.failed(Object.assign(new Error('connect ECONNREFUSED 127.0.0.1:1'), { code: 'ECONNREFUSED' }));
    expect(await trust.options()).toBe(first);
    expect(service.connections()).toBe(1);
    // A certificate the kept chain no longer verifies (the service has a new one): fetched again, and checked against the pin.
    trust.failed(Object.assign(new Error('self-signed certificate'), { code: 'DEPTH_ZERO_SELF_SIGNED_CERT' }));
    expect(await trust.options()).not.toBe(first);
    expect(service.connections()).toBe(2);
    await service.allClosed();
    expect(service.received).toEqual([]);
  });

  it('reports a changed fingerprint on the fetch after a failure', async () => {
    const other = await recordingTlsServer(otherCert);
    const trust = new ServerTrust(other.url, { kind: 'pin', fingerprint: normaliseFingerprint(serviceCert.fingerprint)! });
    await expect(trust.options()).rejects.toThrow('not the pinned');
  });
});

describe('other trust settings', () => {
  it('verifies against a CA file, host name included', async () => {
    const { url } = await enrolService(serviceCert);
    const byName = new URL(`https://localhost:${url.port}`);
    expect(await enrol(byName, 'k', HOST, await tlsOptionsFor(byName, { kind: 'ca', pem: serviceCert.cert }))).toMatchObject({ hostId: 'h1' });
    await expect(enrol(byName, 'k', HOST, await tlsOptionsFor(byName, { kind: 'ca', pem: otherCert.cert }))).rejects.toThrow();
  });

  it('refuses a self-signed certificate with the system CAs', async () => {
    const { url, seen } = await enrolService(serviceCert);
    await expect(enrol(url, 'k', HOST, await tlsOptionsFor(url, { kind: 'system' }))).rejects.toThrow(/self.signed/i);
    expect(seen).toEqual([]);
  });
});

describe('trustAdvice', () => {
  const failure = (promise: Promise<unknown>) => promise.then(() => expect.fail('the connection was trusted'), (error: unknown) => error);

  it('says what to pass, and where the fingerprint is, when the service\'s own certificate is not trusted', async () => {
    const { url } = await enrolService(serviceCert);
    const error = await failure(enrol(url, 'k', HOST, await tlsOptionsFor(url, { kind: 'system' })));
    const advice = trustAdvice(error, { kind: 'system' });
    expect(advice).toContain('pass --ca-file PEM (the service\'s $PITCREW_DATA_DIR/tls/cert.pem, data/tls/cert.pem by default) or --server-fingerprint SHA256');
    expect(advice).toContain('the service logs it at start, in the line "agents connect to https://…; TLS certificate SHA-256 fingerprint AB:CD:…"');
  });

  it('says the --ca-file is not the issuer when it is another certificate', async () => {
    const { url } = await enrolService(serviceCert);
    const byName = new URL(`https://localhost:${url.port}`);
    const error = await failure(enrol(byName, 'k', HOST, await tlsOptionsFor(byName, { kind: 'ca', pem: otherCert.cert })));
    expect(trustAdvice(error, { kind: 'ca', pem: otherCert.cert })).toMatch(/^the service's certificate is not issued by the certificate in --ca-file/);
  });

  it('names the host name check, and gives nothing for other failures', () => {
    expect(trustAdvice(Object.assign(new Error('altnames'), { code: 'ERR_TLS_CERT_ALTNAME_INVALID' }), { kind: 'ca', pem: '' })).toMatch(/does not name the host in --server/);
    expect(trustAdvice(Object.assign(new Error('refused'), { code: 'ECONNREFUSED' }), { kind: 'system' })).toBeUndefined();
    expect(trustAdvice(new Error('no code'), { kind: 'system' })).toBeUndefined();
  });
});

describe('normaliseFingerprint', () => {
  it.each([
    ['ab'.repeat(32), 'AB:'.repeat(31) + 'AB'],
    ['AB:'.repeat(31) + 'AB', 'AB:'.repeat(31) + 'AB'],
    [`sha256 Fingerprint=${'ab:'.repeat(31)}ab`, 'AB:'.repeat(31) + 'AB'],
    ['ab'.repeat(31), undefined],
    ['zz'.repeat(32), undefined],
  ])('%s', (input, expected) => {
    expect(normaliseFingerprint(input)).toBe(expected);
  });
});
