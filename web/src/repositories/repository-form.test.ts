import { describe, expect, it } from 'vitest';
import type { Repository } from '../api/repository-types';
import { checkRepositoryForm, emptyRepositoryForm, looksLikeSsh, missingAccess, repositoryFieldOf, toRepositoryInput, toRepositoryPatch } from './repository-form';

describe('the repository form', () => {
  const form = { ...emptyRepositoryForm(), name: ' ops ', url: ' https://git.example.com/ops.git ', token: ' ghp_abc ' };

  it('sends a token with its user name only when given, and no host keys for HTTPS', () => {
    expect(toRepositoryInput({ ...form, knownHosts: 'left over' })).toEqual({ name: 'ops', url: 'https://git.example.com/ops.git', ref: 'main', credential: { token: 'ghp_abc' } });
    expect(toRepositoryInput({ ...form, username: 'oauth2' }).credential).toEqual({ token: 'ghp_abc', username: 'oauth2' });
    expect(toRepositoryInput({ ...form, access: 'none' })).not.toHaveProperty('credential');
  });

  it('sends a deploy key as pasted, with the host keys', () => {
    const key = '-----BEGIN OPENSSH PRIVATE KEY-----\nAAAA\n-----END OPENSSH PRIVATE KEY-----';
    const input = toRepositoryInput({ ...form, url: 'git@git.example.com:ops.git', access: 'ssh_key', sshPrivateKey: key, knownHosts: ' git.example.com ssh-ed25519 AAAA \n' });
    expect(input).toMatchObject({ credential: { sshPrivateKey: key }, knownHosts: 'git.example.com ssh-ed25519 AAAA' });
  });

  it('asks for what the access needs before sending', () => {
    expect(checkRepositoryForm(emptyRepositoryForm())).toEqual({ name: 'name the repository, e.g. “ops-runbooks”', url: 'enter the URL git clones it from', token: 'paste a read-only access token' });
    expect(Object.keys(missingAccess({ ...form, access: 'ssh_key' }))).toEqual(['sshPrivateKey', 'knownHosts']);
    expect(Object.keys(missingAccess({ ...form, access: 'ssh_key' }, false))).toEqual(['sshPrivateKey']);
    expect(missingAccess({ ...form, token: '', access: 'none' })).toEqual({});
  });

  it('tells SSH URLs from HTTPS ones', () => {
    expect(['ssh://git@host/ops.git', 'git@github.com:ops/runbooks.git'].map(looksLikeSsh)).toEqual([true, true]);
    expect(['https://github.com/ops/runbooks.git', 'https://user@host/x.git', ''].map(looksLikeSsh)).toEqual([false, false, false]);
  });

  it('patches only what changed, and clears the host keys when emptied', () => {
    const repository = { name: 'ops', url: 'ssh://git@host/ops.git', ref: 'main', knownHosts: 'host ssh-ed25519 AAAA' } as Repository;
    expect(toRepositoryPatch(repository, { name: 'ops', url: 'ssh://git@host/ops.git', ref: ' v2 ', knownHosts: 'host ssh-ed25519 AAAA\n' })).toEqual({ ref: 'v2' });
    expect(toRepositoryPatch(repository, { name: 'ops', url: 'ssh://git@host/ops.git', ref: 'main', knownHosts: ' ' })).toEqual({ knownHosts: null });
  });

  it('places the service errors at their fields', () => {
    expect(['/body/url', '/body/credential/token', '/body/credential/sshPrivateKey', '/body/credential', '/body/knownHosts', '/query/ref'].map(repositoryFieldOf)).toEqual([
      'url', 'token', 'sshPrivateKey', 'access', 'knownHosts', undefined,
    ]);
  });
});
