import { randomBytes } from 'node:crypto';
import fs from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { afterAll, describe, expect, it } from 'vitest';
import { SecretBox, loadSecretKey } from './secret-box.js';

const dirs: string[] = [];
afterAll(() => dirs.forEach((dir) => fs.rmSync(dir, { recursive: true, force: true })));
const tempDir = () => {
  const dir = fs.mkdtempSync(path.join(os.tmpdir(), 'pitcrew-key-'));
  dirs.push(dir);
  return dir;
};

describe('SecretBox', () => {
  const box = new SecretBox(randomBytes(32));

  it('opens what it sealed, for the same owner only', () => {
    const sealed = box.seal('https://hooks.slack.com/services/T/B/token', 'channel-1');
    expect(sealed).not.toContain('token');
    expect(sealed).toMatch(/^v1:[0-9a-f]{8}:/);
    expect(box.open(sealed, 'channel-1')).toBe('https://hooks.slack.com/services/T/B/token');
    expect(() => box.open(sealed, 'channel-2')).toThrow(/does not open with this key/);
  });

  it('seals the same text differently each time (a fresh nonce)', () => {
    expect(box.seal('x', 'o')).not.toBe(box.seal('x', 'o'));
  });

  it('refuses a value that was altered', () => {
    const sealed = box.seal('password', 'o');
    const bytes = Buffer.from(sealed.split(':')[2]!, 'base64');
    bytes[bytes.length - 1]! ^= 1;
    expect(() => box.open(`v1:${box.keyId}:${bytes.toString('base64')}`, 'o')).toThrow(/does not open/);
  });

  it('names the key a value was sealed with when this node has another', () => {
    const sealed = new SecretBox(randomBytes(32)).seal('x', 'o');
    expect(() => box.open(sealed, 'o')).toThrow(/sealed with key [0-9a-f]{8}, and this node has key [0-9a-f]{8}: give every node the same PITCREW_SECRET_KEY/);
  });
});

describe('SecretBox with the key a rotation replaces', () => {
  const oldKey = randomBytes(32);
  const oldBox = new SecretBox(oldKey);
  const rotating = new SecretBox(randomBytes(32), oldKey);

  it('opens what the previous key sealed, and seals with the new key only', () => {
    const old = oldBox.seal('smtp-password', 'channel-1');
    expect(rotating.open(old, 'channel-1')).toBe('smtp-password');
    expect(rotating.seal('x', 'o')).toMatch(new RegExp(`^v1:${rotating.keyId}:`));
    expect(rotating.previousKeyId).toBe(oldBox.keyId);
  });

  it('seals again only what the new key did not seal, for the same owner', () => {
    const resealed = rotating.reseal(oldBox.seal('token', 'o'), 'o')!;
    expect(resealed).toMatch(new RegExp(`^v1:${rotating.keyId}:`));
    expect(rotating.reseal(resealed, 'o')).toBeUndefined();
    expect(() => oldBox.open(resealed, 'o')).toThrow(/sealed with key/);
  });

  it('names both keys when a value was sealed by a third', () => {
    expect(() => rotating.open(new SecretBox(randomBytes(32)).seal('x', 'o'), 'o')).toThrow(new RegExp(`and this node has key ${rotating.keyId} \\(and previous key ${oldBox.keyId}\\)`));
  });
});

describe('loadSecretKey', () => {
  it('makes $PITCREW_DATA_DIR/secret.key on first start, mode 0600, and reads the same key after', () => {
    const dir = tempDir();
    const first = loadSecretKey(dir, undefined);
    expect(first.key).toHaveLength(32);
    expect(fs.statSync(path.join(dir, 'secret.key')).mode & 0o777).toBe(0o600);
    expect(loadSecretKey(dir, undefined).key).toEqual(first.key);
    expect(first.warning).toBeUndefined();
  });

  it('prefers PITCREW_SECRET_KEY and writes no file', () => {
    const dir = tempDir();
    const key = randomBytes(32);
    expect(loadSecretKey(dir, key)).toEqual({ key, source: 'PITCREW_SECRET_KEY' });
    expect(fs.existsSync(path.join(dir, 'secret.key'))).toBe(false);
  });

  it('warns about a key file others can read, and refuses one that is not a key', () => {
    const dir = tempDir();
    loadSecretKey(dir, undefined);
    fs.chmodSync(path.join(dir, 'secret.key'), 0o644);
    expect(loadSecretKey(dir, undefined).warning).toMatch(/readable by other users; chmod 600/);
    fs.writeFileSync(path.join(dir, 'secret.key'), 'not a key');
    expect(() => loadSecretKey(dir, undefined)).toThrow(/does not hold a base64 32-byte key/);
  });
});
