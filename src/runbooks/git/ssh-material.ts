import { createHmac } from 'node:crypto';

/** The key types OpenSSH 9 knows host keys and CA keys by. */
const KEY_TYPES = new Set([
  'ssh-ed25519', 'ssh-rsa', 'ecdsa-sha2-nistp256', 'ecdsa-sha2-nistp384', 'ecdsa-sha2-nistp521',
  'sk-ssh-ed25519@openssh.com', 'sk-ecdsa-sha2-nistp256@openssh.com', 'ssh-dss',
]);
const BASE64 = /^[A-Za-z0-9+/]+={0,2}$/;

interface KnownHostsLine {
  marker: '@cert-authority' | '@revoked' | undefined;
  patterns: string[];
}

/** The name ssh looks the server's key up by (ssh_config HostKeyAlias): `host`, or `[host]:port` off port 22, as ssh-keyscan -p writes it. */
export function hostKeyAlias(host: string, port: number): string {
  return port === 22 ? host.toLowerCase() : `[${host.toLowerCase()}]:${port}`;
}

/**
 * Why `text` is not known_hosts lines (sshd(8) SSH_KNOWN_HOSTS FILE FORMAT) holding a key for
 * `alias`, or undefined. Checked when a repository is saved, so that a wrong paste (a public key
 * without hosts, a keyscan of port 22 for a server on 2222) is refused at the field, not at 3 a.m.
 */
export function knownHostsProblem(text: string, alias: string): string | undefined {
  const lines: KnownHostsLine[] = [];
  const rows = text.split(/\r?\n/);
  for (const [index, row] of rows.entries()) {
    const line = row.trim();
    if (line === '' || line.startsWith('#')) continue;
    const parsed = parseLine(line);
    if (typeof parsed === 'string') return `line ${index + 1} ${parsed}; paste lines as ssh-keyscan prints them: hosts, key type, key`;
    lines.push(parsed);
  }
  if (lines.length === 0) return `holds no known_hosts line; get the server's keys with ${keyscanHint(alias)} and check them against fingerprints you trust`;
  if (!lines.some((line) => line.marker !== '@revoked' && matchesHost(line.patterns, alias))) {
    return `has no line for ${alias}, the host (and port) of the repository's URL; get its keys with ${keyscanHint(alias)} and check them against fingerprints you trust`;
  }
  return undefined;
}

function parseLine(line: string): KnownHostsLine | string {
  const fields = line.split(/\s+/);
  const marker = fields[0]?.startsWith('@') ? fields.shift() : undefined;
  if (marker !== undefined && marker !== '@cert-authority' && marker !== '@revoked') return `starts with ${marker}, which is not @cert-authority or @revoked`;
  const [hosts, type, key] = fields;
  if (hosts !== undefined && KEY_TYPES.has(hosts)) return 'starts with the key type, without the host it is the key of in front';
  if (hosts === undefined || type === undefined || key === undefined) return 'has fewer than three fields';
  if (!KEY_TYPES.has(type)) return `has the key type "${type.slice(0, 40)}", which is not one OpenSSH knows (ssh-ed25519, ecdsa-sha2-nistp256, ssh-rsa…)`;
  if (!BASE64.test(key) || !keyBlobNames(key, type)) return `has a key that is not the base64 of a ${type} key`;
  return { marker, patterns: hosts.split(',') };
}

/** The key blob (RFC 4253 §6.6) starts with its type's name as an SSH string. */
function keyBlobNames(key: string, type: string): boolean {
  const blob = Buffer.from(key, 'base64');
  if (blob.length < 4) return false;
  const length = blob.readUInt32BE(0);
  return length === Buffer.byteLength(type) && blob.subarray(4, 4 + length).toString('latin1') === type;
}

/** ssh's match_hostname: hashed entries (|1|salt|hash), wildcards, negations; any negation that matches wins. */
function matchesHost(patterns: string[], alias: string): boolean {
  let matched = false;
  for (const pattern of patterns) {
    const negated = pattern.startsWith('!');
    const body = negated ? pattern.slice(1) : pattern;
    if (!matchesPattern(body, alias)) continue;
    if (negated) return false;
    matched = true;
  }
  return matched;
}

function matchesPattern(pattern: string, alias: string): boolean {
  if (pattern.startsWith('|1|')) {
    const [, , salt, hash] = pattern.split('|');
    if (!salt || !hash) return false;
    return createHmac('sha1', Buffer.from(salt, 'base64')).update(alias).digest('base64') === hash;
  }
  const regex = new RegExp(`^${pattern.toLowerCase().replace(/[.+^${}()|[\]\\]/g, '\\$&').replaceAll('*', '.*').replaceAll('?', '.')}$`);
  return regex.test(alias);
}

function keyscanHint(alias: string): string {
  const match = /^\[(.+)\]:(\d+)$/.exec(alias);
  return match ? `ssh-keyscan -p ${match[2]} ${match[1]}` : `ssh-keyscan ${alias}`;
}

const passphraseAdvice = 'is protected by a passphrase, which pitcrew cannot type; make a deploy key without one (ssh-keygen -t ed25519 -N "" -f deploy-key) and give that';
const PRIVATE_KEY = /^-----BEGIN ((?:OPENSSH |RSA |EC |DSA )?)PRIVATE KEY-----\n([\s\S]+?)\n-----END \1PRIVATE KEY-----$/;

/** The key as ssh reads it: Unix line ends, and the last line ended (ssh refuses a key file without it). */
export function normalisePrivateKey(text: string): string {
  return `${text.replace(/\r\n?/g, '\n').trim()}\n`;
}

/** Why `text` is not an unencrypted SSH private key ssh can use without asking anything, or undefined. */
export function privateKeyProblem(text: string): string | undefined {
  const key = normalisePrivateKey(text).trimEnd();
  if (/^(ssh-|ecdsa-|sk-)\S+ AAAA/.test(key) || key.includes('PUBLIC KEY-----')) {
    return 'is a public key; give the private key (the file without .pub) and add the public one to the repository\'s deploy keys';
  }
  if (key.includes('-----BEGIN ENCRYPTED PRIVATE KEY-----')) return passphraseAdvice;
  const match = PRIVATE_KEY.exec(key);
  if (!match) return 'is not an SSH private key: paste the whole file, from -----BEGIN OPENSSH PRIVATE KEY----- to its END line';
  const [, kind, body = ''] = match;
  if (kind !== 'OPENSSH ') return body.includes('Proc-Type: 4,ENCRYPTED') ? passphraseAdvice : undefined;
  // openssh-key-v1 (PROTOCOL.key): the magic, then the cipher's name as an SSH string; "none" when unencrypted.
  const blob = Buffer.from(body.replace(/\s+/g, ''), 'base64');
  const magic = Buffer.from('openssh-key-v1\0', 'latin1');
  if (blob.length < magic.length + 4 || !blob.subarray(0, magic.length).equals(magic)) return 'is not a readable OpenSSH private key (its content is damaged); paste the key file again';
  const length = blob.readUInt32BE(magic.length);
  const cipher = blob.subarray(magic.length + 4, magic.length + 4 + length).toString('latin1');
  return cipher === 'none' ? undefined : passphraseAdvice;
}
