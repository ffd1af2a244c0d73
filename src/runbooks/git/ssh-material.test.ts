import { execFileSync } from 'node:child_process';
import fs from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { afterAll, describe, expect, it } from 'vitest';
import { hostKeyAlias, knownHostsProblem, normalisePrivateKey, privateKeyProblem } from './ssh-material.js';

const dir = fs.mkdtempSync(path.join(os.tmpdir(), 'pitcrew-ssh-material-'));
afterAll(() => fs.rmSync(dir, { recursive: true, force: true }));

/** A key pair from ssh-keygen itself, in the format asked for. */
function keygen(name: string, args: string[]): { privateKey: string; publicKey: string } {
  const file = path.join(dir, name);
  execFileSync('ssh-keygen', ['-q', '-f', file, ...args]);
  return { privateKey: fs.readFileSync(file, 'utf8'), publicKey: fs.readFileSync(`${file}.pub`, 'utf8').trim() };
}

const hostKey = keygen('host', ['-t', 'ed25519', '-N', '']).publicKey.split(' ').slice(0, 2).join(' ');

describe('knownHostsProblem', () => {
  it('finds the line for the alias ssh looks the key up by, plain, wildcard or hashed', () => {
    expect(hostKeyAlias('Git.Example.com', 22)).toBe('git.example.com');
    expect(hostKeyAlias('git.example.com', 2222)).toBe('[git.example.com]:2222');
    expect(knownHostsProblem(`# keyscan\n\ngit.example.com,10.0.0.5 ${hostKey}\n`, 'git.example.com')).toBeUndefined();
    expect(knownHostsProblem(`[git.example.com]:2222 ${hostKey}`, '[git.example.com]:2222')).toBeUndefined();
    expect(knownHostsProblem(`*.example.com ${hostKey}`, 'git.example.com')).toBeUndefined();
    expect(knownHostsProblem(`@cert-authority *.example.com ${hostKey}`, 'git.example.com')).toBeUndefined();
    const hashedFile = path.join(dir, 'known_hosts');
    fs.writeFileSync(hashedFile, `[git.example.com]:2222 ${hostKey}\n`);
    execFileSync('ssh-keygen', ['-q', '-H', '-f', hashedFile]);
    const hashed = fs.readFileSync(hashedFile, 'utf8');
    expect(hashed).toMatch(/^\|1\|/);
    expect(knownHostsProblem(hashed, '[git.example.com]:2222')).toBeUndefined();
    expect(knownHostsProblem(hashed, 'git.example.com')).toMatch(/has no line for git\.example\.com/);
  });

  it.each([
    ['', /holds no known_hosts line; get the server's keys with ssh-keyscan git\.example\.com/],
    [`other.example.com ${hostKey}`, /has no line for git\.example\.com, the host \(and port\)/],
    [`*.example.com,!git.example.com ${hostKey}`, /has no line for git\.example\.com/],
    [`@revoked git.example.com ${hostKey}`, /has no line for git\.example\.com/],
    [hostKey, /line 1 starts with the key type, without the host it is the key of in front/],
    [`git.example.com ssh-ed25519`, /line 1 has fewer than three fields/],
    [`git.example.com ssh-rsa ${hostKey.split(' ')[1]}`, /line 1 has a key that is not the base64 of a ssh-rsa key/],
    [`git.example.com ssh-ed25519 not*base64`, /not the base64/],
    [`@marker git.example.com ${hostKey}`, /starts with @marker/],
    [`git.example.com ${hostKey}\ngit.example.com foo AAAA`, /line 2 has the key type "foo"/],
  ])('refuses %j', (text, message) => {
    expect(knownHostsProblem(text, 'git.example.com')).toMatch(message);
  });
});

describe('privateKeyProblem', () => {
  it.each([
    ['ed25519, OpenSSH format', ['-t', 'ed25519', '-N', '']],
    ['ECDSA, OpenSSH format', ['-t', 'ecdsa', '-N', '']],
    ['RSA, PEM format', ['-t', 'rsa', '-b', '2048', '-m', 'PEM', '-N', '']],
    ['ECDSA, PKCS#8', ['-t', 'ecdsa', '-m', 'PKCS8', '-N', '']],
  ])('takes an unencrypted key: %s', (name, args) => {
    const { privateKey } = keygen(name.replace(/\W/g, '_'), args);
    expect(privateKeyProblem(privateKey)).toBeUndefined();
    // Pasted from Windows, or without the last line break: ssh would refuse the file as it came.
    expect(privateKeyProblem(privateKey.replaceAll('\n', '\r\n').trimEnd())).toBeUndefined();
    expect(normalisePrivateKey(privateKey.replaceAll('\n', '\r\n').trimEnd())).toBe(privateKey);
  });

  it.each([
    ['ed25519, OpenSSH format', ['-t', 'ed25519']],
    ['RSA, PEM format', ['-t', 'rsa', '-b', '2048', '-m', 'PEM']],
    ['ECDSA, PKCS#8', ['-t', 'ecdsa', '-m', 'PKCS8']],
  ])('refuses a key with a passphrase: %s', (name, args) => {
    const { privateKey } = keygen(`pass_${name.replace(/\W/g, '_')}`, [...args, '-N', 'correct horse']);
    expect(privateKeyProblem(privateKey)).toMatch(/protected by a passphrase, which pitcrew cannot type; make a deploy key without one/);
  });

  it('refuses a public key, a damaged key and text that is no key', () => {
    const { privateKey, publicKey } = keygen('plain', ['-t', 'ed25519', '-N', '']);
    expect(privateKeyProblem(publicKey)).toMatch(/is a public key/);
    expect(privateKeyProblem(privateKey.split('\n').slice(0, 3).join('\n'))).toMatch(/paste the whole file/);
    expect(privateKeyProblem(privateKey.replace(/\n[A-Za-z0-9+/]{20}/, '\nAAAAAAAAAAAAAAAAAAAA'))).toMatch(/damaged|passphrase/);
    expect(privateKeyProblem('hunter2')).toMatch(/is not an SSH private key/);
  });
});
