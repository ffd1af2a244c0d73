import { createCipheriv, createDecipheriv, hash, hkdfSync, randomBytes } from 'node:crypto';
import fs from 'node:fs';
import path from 'node:path';

const VERSION = 'v1';
const IV_BYTES = 12; // the GCM nonce size NIST SP 800-38D recommends
const TAG_BYTES = 16;
export const SECRET_KEY_FILE = 'secret.key';

/**
 * Seals secrets (SMTP passwords, chat webhook URLs, webhook signing secrets) with AES-256-GCM under
 * a key kept outside the database (DESIGN.md §6): a stolen database dump reveals no secret.
 * Each sealed value is bound to its owner (the channel id) as additional data, so a sealed value
 * copied onto another row does not open there. The key's short fingerprint travels with each
 * value, so a node started with another key says so instead of failing obscurely.
 */
export class SecretBox {
  readonly keyId: string;
  /** The key being replaced (PITCREW_SECRET_KEY_PREVIOUS) during a rotation: it opens, never seals. */
  readonly previousKeyId: string | undefined;

  constructor(
    private readonly key: Buffer,
    private readonly previous?: Buffer,
  ) {
    if (key.length !== 32) throw new Error('the secret key must be 32 bytes (AES-256)');
    if (previous && previous.length !== 32) throw new Error('the previous secret key must be 32 bytes (AES-256)');
    this.keyId = keyFingerprint(key);
    this.previousKeyId = previous && keyFingerprint(previous);
  }

  /** A key of its own for one purpose (signed links), from this one: every node with the same PITCREW_SECRET_KEY derives the same. */
  derivedKey(purpose: string, bytes = 32): Buffer {
    return Buffer.from(hkdfSync('sha256', this.key, Buffer.alloc(0), `pitcrew ${purpose}`, bytes));
  }

  seal(plain: string, owner: string): string {
    const iv = randomBytes(IV_BYTES);
    const cipher = createCipheriv('aes-256-gcm', this.key, iv);
    cipher.setAAD(Buffer.from(owner));
    const sealed = Buffer.concat([cipher.update(plain, 'utf8'), cipher.final()]);
    return `${VERSION}:${this.keyId}:${Buffer.concat([iv, cipher.getAuthTag(), sealed]).toString('base64')}`;
  }

  open(value: string, owner: string): string {
    const [version, keyId, data] = value.split(':');
    if (version !== VERSION || !keyId || !data) throw new SecretBoxError('the stored secret is not in a format this version reads');
    const key = keyId === this.keyId ? this.key : keyId === this.previousKeyId ? this.previous! : undefined;
    if (!key) {
      const previous = this.previousKeyId ? ` (and previous key ${this.previousKeyId})` : '';
      throw new SecretBoxError(`the secret was sealed with key ${keyId}, and this node has key ${this.keyId}${previous}: give every node the same PITCREW_SECRET_KEY (or secret.key file)`);
    }
    const bytes = Buffer.from(data, 'base64');
    try {
      const decipher = createDecipheriv('aes-256-gcm', key, bytes.subarray(0, IV_BYTES));
      decipher.setAAD(Buffer.from(owner));
      decipher.setAuthTag(bytes.subarray(IV_BYTES, IV_BYTES + TAG_BYTES));
      return Buffer.concat([decipher.update(bytes.subarray(IV_BYTES + TAG_BYTES)), decipher.final()]).toString('utf8');
    } catch {
      throw new SecretBoxError('the stored secret does not open with this key (altered, or sealed for another record); set the secret again');
    }
  }

  /** The value sealed again with this box's key, or undefined when it already is. The plain text lives only in this call. */
  reseal(value: string, owner: string): string | undefined {
    return sealedKeyId(value) === this.keyId ? undefined : this.seal(this.open(value, owner), owner);
  }
}

export class SecretBoxError extends Error {}

/** The fingerprint of the key that sealed a stored value (`v1:<keyId>:…`), or undefined for a value not sealed by a SecretBox. */
export function sealedKeyId(value: string): string | undefined {
  const [version, keyId] = value.split(':', 2);
  return version === VERSION && keyId ? keyId : undefined;
}

/** The fingerprint people see of a key: the one each value it seals carries. */
export function keyFingerprint(key: Buffer): string {
  return hash('sha256', key, 'hex').slice(0, 8);
}

/** A key file as the service writes it (base64 of 32 bytes); an error that says what is wrong with it. */
export function readSecretKeyFile(file: string): Buffer {
  const key = Buffer.from(fs.readFileSync(file, 'utf8').trim(), 'base64');
  if (key.length !== 32) throw new Error(`${file} does not hold a base64 32-byte key; restore it from a backup (secrets sealed with it cannot be opened otherwise)`);
  return key;
}

/** The key the service would use, without making one: PITCREW_SECRET_KEY, else the data directory's secret.key if it exists. */
export function existingSecretKey(dataDir: string, configured: Buffer | undefined): { key: Buffer; source: string } | undefined {
  if (configured) return { key: configured, source: 'PITCREW_SECRET_KEY' };
  const file = path.join(dataDir, SECRET_KEY_FILE);
  return fs.existsSync(file) ? { key: readSecretKeyFile(file), source: file } : undefined;
}

/**
 * The key: PITCREW_SECRET_KEY when set (config validated it), else `$PITCREW_DATA_DIR/secret.key`,
 * made on first start with mode 0600. `wx` makes two processes starting at once agree on one file.
 */
export function loadSecretKey(dataDir: string, configured: Buffer | undefined): { key: Buffer; source: string; warning?: string } {
  if (configured) return { key: configured, source: 'PITCREW_SECRET_KEY' };
  const file = path.join(dataDir, SECRET_KEY_FILE);
  fs.mkdirSync(dataDir, { recursive: true });
  try {
    fs.writeFileSync(file, `${randomBytes(32).toString('base64')}\n`, { flag: 'wx', mode: 0o600 });
  } catch (error) {
    if ((error as NodeJS.ErrnoException).code !== 'EEXIST') throw error;
  }
  const key = readSecretKeyFile(file);
  const loose = (fs.statSync(file).mode & 0o077) !== 0;
  return { key, source: file, ...(loose ? { warning: `${file} is readable by other users; chmod 600 it` } : {}) };
}
