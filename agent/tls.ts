import { isIP } from 'node:net';
import { connect, createSecureContext, type ConnectionOptions, type PeerCertificate, type TLSSocket } from 'node:tls';

/*
 * How the agent trusts the service. With a pinned fingerprint the agent first fetches the
 * server's certificate over a TLS connection that sends nothing, checks its SHA-256 fingerprint,
 * and only then connects for real with that certificate as the one trusted CA and a
 * checkServerIdentity that compares the fingerprint again. `rejectUnauthorized: false` is never
 * used for a connection that carries a credential: with it, Node skips checkServerIdentity
 * whenever the chain does not verify, so a pin check there would not run.
 */

export type Trust =
  | { kind: 'system' }
  | { kind: 'ca'; pem: string }
  | { kind: 'pin'; fingerprint: string }
  /** http:// on loopback, allowed by --insecure. */
  | { kind: 'plain' };

/**
 * TLS options for https.request and for ws (which hands them to tls.connect). The trusted CAs go
 * in a `secureContext` made once: given as `ca`, every connection parses them and builds a new
 * OpenSSL context, a third of a TLS client's CPU per connection (1.9 ms against 1.25 ms with one
 * context, 2,000 handshakes to a local server); the simulated fleet of bench/fleet.js pays it
 * 10,000 times per reconnection.
 */
export type TlsOptions = Pick<ConnectionOptions, 'ca' | 'checkServerIdentity' | 'rejectUnauthorized' | 'secureContext'>;

const PREFLIGHT_TIMEOUT_MS = 15_000;

/** 'AB:CD:…' (64 hex digits in pairs, upper case, as Node prints fingerprint256), or undefined. */
export function normaliseFingerprint(text: string): string | undefined {
  // Also takes openssl's `sha256 Fingerprint=AB:CD:…` as it prints it.
  const hex = text.slice(text.lastIndexOf('=') + 1).replace(/[:\s]/g, '').toUpperCase();
  if (!/^[0-9A-F]{64}$/.test(hex)) return undefined;
  return hex.match(/../g)!.join(':');
}

/** The options for the next connection to `server`; for a pin, this checks the server first. */
export async function tlsOptionsFor(server: URL, trust: Trust): Promise<TlsOptions> {
  switch (trust.kind) {
    case 'plain':
      return {};
    case 'system':
      return { secureContext: createSecureContext() };
    case 'ca':
      return { secureContext: createSecureContext({ ca: trust.pem }), rejectUnauthorized: true };
    case 'pin': {
      const chain = await fetchPinnedChain(hostOf(server), portOf(server), trust.fingerprint);
      return { secureContext: createSecureContext({ ca: chain }), rejectUnauthorized: true, checkServerIdentity: pinCheck(trust.fingerprint) };
    }
  }
}

/**
 * The TLS options of one server, kept between connections. A pin's chain is fetched once, not
 * before every connection: each preflight is a full TLS handshake on both sides, and a fleet
 * reconnecting to a restarted service paid two handshakes per agent. Every real connection still
 * verifies the chain and compares the fingerprint; a connection refused for its certificate forgets
 * the kept options, so the next one fetches the chain again (and reports a changed fingerprint).
 */
export class ServerTrust {
  private kept: TlsOptions | undefined;
  /**
   * The last TLS session the service issued (its ticket), offered on the next connection: a
   * restarted service, or another node of its cluster, resumes it (src/server/session-tickets.ts)
   * instead of a full handshake. Only a server holding the ticket key can resume it.
   */
  private session: Buffer | undefined;

  constructor(
    private readonly server: URL,
    private readonly trust: Trust,
  ) {}

  async options(): Promise<TlsOptions> {
    this.kept ??= await tlsOptionsFor(this.server, this.trust);
    return this.kept;
  }

  /** After a failed connection: a certificate this host no longer trusts means fetching again. */
  failed(error: unknown): void {
    if (!isCertificateFailure(error)) return;
    this.kept = undefined;
    this.session = undefined;
  }

  /**
   * Opens the TLS socket of a connection as `ws` would (its tlsConnect), offering the kept
   * session and keeping each new one the service sends (TLS 1.3 sends tickets after the handshake).
   */
  connect(options: ConnectionOptions): TLSSocket {
    const host = options.host ?? '';
    const socket = connect({ ...options, path: undefined, servername: options.servername ?? (isIP(host) ? '' : host), ...(this.session ? { session: this.session } : {}) });
    socket.on('session', (session: Buffer) => (this.session = session));
    return socket;
  }
}

function isCertificateFailure(error: unknown): boolean {
  const { code, message } = (error ?? {}) as { code?: unknown; message?: unknown };
  return (typeof code === 'string' && (UNTRUSTED.has(code) || code.startsWith('ERR_TLS_CERT') || code.startsWith('CERT_')))
    || (typeof message === 'string' && message.includes('not the pinned'));
}

/** Accepts only the certificate with this fingerprint; replaces the host name check, which a pin makes moot. */
export function pinCheck(fingerprint: string): (host: string, cert: PeerCertificate) => Error | undefined {
  return (_host, cert) =>
    normaliseFingerprint(cert.fingerprint256 ?? '') === fingerprint ? undefined : new Error(mismatch(cert.fingerprint256, fingerprint));
}

/**
 * Opens a TLS connection, writes nothing, and returns the server's certificate chain as PEM if
 * its leaf has the pinned fingerprint; rejects otherwise.
 */
export function fetchPinnedChain(host: string, port: number, fingerprint: string): Promise<string[]> {
  return new Promise((resolve, reject) => {
    const socket = connect({ host, port, servername: isIP(host) ? undefined : host, rejectUnauthorized: false });
    socket.setTimeout(PREFLIGHT_TIMEOUT_MS, () => socket.destroy(new Error(`no TLS handshake with ${host}:${port} within ${PREFLIGHT_TIMEOUT_MS / 1000} s`)));
    socket.once('error', reject);
    socket.once('secureConnect', () => {
      const leaf = socket.getPeerCertificate(true);
      socket.destroy();
      if (normaliseFingerprint(leaf.fingerprint256 ?? '') !== fingerprint) return reject(new Error(mismatch(leaf.fingerprint256, fingerprint)));
      resolve(chainOf(leaf).map(toPem));
    });
  });
}

function chainOf(leaf: PeerCertificate): PeerCertificate[] {
  const chain: PeerCertificate[] = [leaf];
  let current = leaf as PeerCertificate & { issuerCertificate?: PeerCertificate };
  // A self-signed certificate is its own issuer: stop there.
  while (current.issuerCertificate && current.issuerCertificate !== current && chain.length < 10) {
    current = current.issuerCertificate;
    chain.push(current);
  }
  return chain;
}

function toPem(cert: PeerCertificate): string {
  const base64 = cert.raw.toString('base64').match(/.{1,64}/g)!.join('\n');
  return `-----BEGIN CERTIFICATE-----\n${base64}\n-----END CERTIFICATE-----\n`;
}

function mismatch(presented: string | undefined, pinned: string): string {
  return `the server's certificate has SHA-256 fingerprint ${presented ?? 'unknown'}, not the pinned ${pinned} (--server-fingerprint); `
    + 'if the service made a new certificate, take the fingerprint it prints at start and update the flag';
}

/** Node's codes for a certificate chain this host does not trust. */
const UNTRUSTED = new Set([
  'DEPTH_ZERO_SELF_SIGNED_CERT', 'SELF_SIGNED_CERT_IN_CHAIN', 'UNABLE_TO_VERIFY_LEAF_SIGNATURE',
  'UNABLE_TO_GET_ISSUER_CERT', 'UNABLE_TO_GET_ISSUER_CERT_LOCALLY', 'CERT_UNTRUSTED', 'CERT_SIGNATURE_FAILURE',
]);

const WHERE_THE_FINGERPRINT_IS = 'the service logs it at start, in the line "agents connect to https://…; TLS certificate SHA-256 fingerprint AB:CD:…", '
  + 'and on its machine `openssl x509 -in "${PITCREW_DATA_DIR:-data}/tls/cert.pem" -noout -fingerprint -sha256` prints it';

/**
 * What to do about a TLS failure, for the log line of a failed connection: retrying alone never
 * helps when this host does not trust the service's certificate. Undefined for other errors.
 */
export function trustAdvice(error: unknown, trust: Trust): string | undefined {
  const code = (error as { code?: unknown } | null)?.code;
  if (code === 'ERR_TLS_CERT_ALTNAME_INVALID') {
    return `the service's certificate does not name the host in --server: use a name the certificate holds, or pin it with --server-fingerprint SHA256 (no name check); ${WHERE_THE_FINGERPRINT_IS}`;
  }
  if (typeof code !== 'string' || !UNTRUSTED.has(code)) return undefined;
  if (trust.kind === 'pin') {
    return 'the pinned certificate is not self-signed and the service does not send the chain that issued it: have it send its whole chain, or trust that CA with --ca-file instead';
  }
  if (trust.kind === 'ca') {
    return `the service's certificate is not issued by the certificate in --ca-file: give the service's own (its $PITCREW_DATA_DIR/tls/cert.pem, data/tls/cert.pem by default) or the CA that issued it, or pin it with --server-fingerprint SHA256; ${WHERE_THE_FINGERPRINT_IS}`;
  }
  return `this host does not trust the service's certificate (the service makes its own unless given one): pass --ca-file PEM (the service's $PITCREW_DATA_DIR/tls/cert.pem, data/tls/cert.pem by default) or --server-fingerprint SHA256; ${WHERE_THE_FINGERPRINT_IS}`;
}

/** The host for a socket: URL.hostname keeps IPv6 brackets. */
export function hostOf(url: URL): string {
  return url.hostname.replace(/^\[(.*)\]$/, '$1');
}

export function portOf(url: URL): number {
  return url.port ? Number(url.port) : url.protocol === 'https:' ? 443 : 80;
}

export function isLoopbackHost(url: URL): boolean {
  const host = hostOf(url).toLowerCase();
  return host === 'localhost' || host === '::1' || (isIP(host) === 4 && host.startsWith('127.'));
}
