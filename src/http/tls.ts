import { X509Certificate, createPrivateKey } from 'node:crypto';
import fs from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { ConfigError } from '../config/config.js';
import { counted } from '../errors/counts.js';

export interface TlsMaterial {
  cert: string;
  key: string;
  /** SHA-256 fingerprint as colon-separated hex, the form `pitcrew agent --server-fingerprint` takes. */
  fingerprint: string;
  selfSigned: boolean;
  /** When the certificate stops being valid. */
  validTo: Date;
}

/**
 * The configured certificate, or for a first run a self-signed one kept in the data directory
 * ($PITCREW_DATA_DIR/tls/cert.pem) so agents can pin its fingerprint across restarts.
 */
export async function loadTlsMaterial(dataDir: string, configured: { certFile?: string; keyFile?: string }): Promise<TlsMaterial> {
  if (configured.certFile && configured.keyFile) {
    const cert = readPem('PITCREW_TLS_CERT', configured.certFile);
    const key = readPem('PITCREW_TLS_KEY', configured.keyFile);
    const certificate = checkPair(cert, configured.certFile, key, configured.keyFile);
    return { cert, key, fingerprint: certificate.fingerprint256, selfSigned: false, validTo: new Date(certificate.validTo) };
  }
  const dir = path.join(dataDir, 'tls');
  const certFile = path.join(dir, 'cert.pem');
  const keyFile = path.join(dir, 'key.pem');
  if (!fs.existsSync(certFile) || !fs.existsSync(keyFile)) {
    fs.mkdirSync(dir, { recursive: true, mode: 0o700 });
    const pems = await generateSelfSigned();
    fs.writeFileSync(keyFile, pems.private, { mode: 0o600 });
    fs.writeFileSync(certFile, pems.cert, { mode: 0o644 });
  }
  const cert = fs.readFileSync(certFile, 'utf8');
  const certificate = new X509Certificate(cert);
  return { cert, key: fs.readFileSync(keyFile, 'utf8'), fingerprint: certificate.fingerprint256, selfSigned: true, validTo: new Date(certificate.validTo) };
}

function readPem(variable: string, file: string): string {
  try {
    return fs.readFileSync(file, 'utf8');
  } catch (error) {
    throw new ConfigError(`${variable}: cannot read ${file} (${(error as NodeJS.ErrnoException).code ?? (error as Error).message})`);
  }
}

/** Refuses at start what TLS would refuse later with an OpenSSL code: no certificate, no key, or a key of another certificate. */
function checkPair(cert: string, certFile: string, key: string, keyFile: string): X509Certificate {
  let certificate: X509Certificate;
  try {
    certificate = new X509Certificate(cert);
  } catch {
    throw new ConfigError(`PITCREW_TLS_CERT: ${certFile} holds no PEM certificate`);
  }
  let privateKey;
  try {
    privateKey = createPrivateKey(key);
  } catch {
    throw new ConfigError(`PITCREW_TLS_KEY: ${keyFile} holds no unencrypted PEM private key`);
  }
  if (!certificate.checkPrivateKey(privateKey)) {
    throw new ConfigError(`PITCREW_TLS_KEY: ${keyFile} is not the key of the certificate in ${certFile} (the file's first certificate must be the server's own, then its chain)`);
  }
  return certificate;
}

/** Loads selfsigned here, for a first run only: it and its X.509 libraries took ~0.13 s of CPU at every start. */
async function generateSelfSigned() {
  const { default: selfsigned } = await import('selfsigned');
  const now = new Date();
  const notAfter = new Date(now);
  notAfter.setFullYear(now.getFullYear() + 5);
  return selfsigned.generate([{ name: 'commonName', value: os.hostname() }], {
    keyType: 'ec',
    curve: 'P-256',
    algorithm: 'sha256',
    notBeforeDate: now,
    notAfterDate: notAfter,
    extensions: [
      { name: 'basicConstraints', cA: true },
      { name: 'subjectAltName', altNames: [{ type: 2, value: os.hostname() }, { type: 2, value: 'localhost' }, { type: 7, ip: '127.0.0.1' }, { type: 7, ip: '::1' }] },
    ],
  });
}

/**
 * What to tell the operator at start about the certificate's end date: agents check it even for
 * a pinned certificate, so an expired one cuts every agent off.
 */
export function expiryNotice(tls: Pick<TlsMaterial, 'validTo' | 'selfSigned'>, dataDir: string, now = Date.now()): { level: 'error' | 'warn'; message: string } | undefined {
  const daysLeft = Math.floor((tls.validTo.getTime() - now) / 86_400_000);
  const renew = tls.selfSigned ? `remove ${path.join(dataDir, 'tls')} to have a new one made, then give agents its fingerprint` : 'renew it';
  if (tls.validTo.getTime() <= now) return { level: 'error', message: `the TLS certificate expired on ${tls.validTo.toISOString()} and agents refuse it: ${renew}` };
  if (daysLeft < EXPIRY_WARNING_DAYS) return { level: 'warn', message: `the TLS certificate expires on ${tls.validTo.toISOString()}, in ${counted(daysLeft, 'day')}: ${renew}` };
  return undefined;
}

const EXPIRY_WARNING_DAYS = 14;

