import { X509Certificate } from 'node:crypto';
import fs from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import selfsigned from 'selfsigned';

export interface TlsMaterial {
  cert: string;
  key: string;
  /** SHA-256 fingerprint as colon-separated hex, the form `pitcrew agent --server-fingerprint` takes. */
  fingerprint: string;
  selfSigned: boolean;
}

/**
 * The configured certificate, or for a first run a self-signed one kept in the data directory
 * ($PITCREW_DATA_DIR/tls/cert.pem) so agents can pin its fingerprint across restarts.
 */
export async function loadTlsMaterial(dataDir: string, configured: { certFile?: string; keyFile?: string }): Promise<TlsMaterial> {
  if (configured.certFile && configured.keyFile) {
    const cert = fs.readFileSync(configured.certFile, 'utf8');
    return { cert, key: fs.readFileSync(configured.keyFile, 'utf8'), fingerprint: fingerprintOf(cert), selfSigned: false };
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
  return { cert, key: fs.readFileSync(keyFile, 'utf8'), fingerprint: fingerprintOf(cert), selfSigned: true };
}

export function fingerprintOf(certPem: string): string {
  return new X509Certificate(certPem).fingerprint256;
}

async function generateSelfSigned() {
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
