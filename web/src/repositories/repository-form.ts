import type { Repository, RepositoryAuth, RepositoryCredential, RepositoryInput, RepositoryPatch } from '../api/repository-types';

/** How pitcrew proves itself to the git server, and the secrets that takes, as typed. Secrets are write-only. */
export interface AccessForm {
  access: RepositoryAuth;
  token: string;
  username: string;
  sshPrivateKey: string;
  /** SSH: known_hosts lines (not a secret: the view shows them). */
  knownHosts: string;
}

export interface RepositoryForm extends AccessForm {
  name: string;
  url: string;
  ref: string;
}

export type RepositoryField = keyof RepositoryForm;
export type RepositoryErrors = Partial<Record<RepositoryField, string>>;

export const NO_SECRETS = { token: '', username: '', sshPrivateKey: '' } as const;

export function emptyRepositoryForm(): RepositoryForm {
  return { name: '', url: '', ref: 'main', access: 'token', ...NO_SECRETS, knownHosts: '' };
}

/** An SSH URL (ssh://… or user@host:path) takes a deploy key; an HTTPS one a token, or nothing for a public repository. */
export function looksLikeSsh(url: string): boolean {
  return /^ssh:\/\//i.test(url.trim()) || /^[^/@\s]+@[^/:\s]+:/.test(url.trim());
}

/** The credential to send: the token and its user name (when given), or the key; none for a public repository. */
export function toCredential(form: AccessForm): RepositoryCredential | undefined {
  if (form.access === 'token') return { token: form.token.trim(), ...(form.username.trim() ? { username: form.username.trim() } : {}) };
  // As pasted: the service puts back the line feeds a copy may lose.
  if (form.access === 'ssh_key') return { sshPrivateKey: form.sshPrivateKey };
  return undefined;
}

export function toRepositoryInput(form: RepositoryForm): RepositoryInput {
  const credential = toCredential(form);
  const knownHosts = form.knownHosts.trim();
  return {
    name: form.name.trim(),
    url: form.url.trim(),
    ref: form.ref.trim(),
    ...(credential ? { credential } : {}),
    ...(form.access === 'ssh_key' && knownHosts ? { knownHosts } : {}),
  };
}

/** What the access needs typed (the host keys too, unless `withKnownHosts` is false); the service checks the shapes. */
export function missingAccess(form: AccessForm, withKnownHosts = true): RepositoryErrors {
  if (form.access === 'token' && !form.token.trim()) return { token: 'paste a read-only access token' };
  if (form.access !== 'ssh_key') return {};
  return {
    ...(form.sshPrivateKey.trim() ? {} : { sshPrivateKey: 'paste the deploy key (an OpenSSH private key without a passphrase)' }),
    ...(form.knownHosts.trim() || !withKnownHosts ? {} : { knownHosts: 'paste the server’s host keys: ssh-keyscan HOST prints them' }),
  };
}

export function checkRepositoryForm(form: RepositoryForm): RepositoryErrors {
  return {
    ...(form.name.trim() ? {} : { name: 'name the repository, e.g. “ops-runbooks”' }),
    ...(form.url.trim() ? {} : { url: 'enter the URL git clones it from' }),
    ...(form.ref.trim() ? {} : { ref: 'name the branch or tag runbooks are read at, e.g. main' }),
    ...missingAccess(form),
  };
}

/** Only what changed of the name, URL, ref and host keys: a PATCH leaves the rest, the credential included, as it is. */
export function toRepositoryPatch(repository: Repository, form: Pick<RepositoryForm, 'name' | 'url' | 'ref' | 'knownHosts'>): RepositoryPatch {
  const patch: RepositoryPatch = {};
  if (form.name.trim() !== repository.name) patch.name = form.name.trim();
  if (form.url.trim() !== repository.url) patch.url = form.url.trim();
  if (form.ref.trim() !== repository.ref) patch.ref = form.ref.trim();
  const knownHosts = form.knownHosts.trim();
  if (knownHosts !== (repository.knownHosts ?? '').trim()) patch.knownHosts = knownHosts || null;
  return patch;
}

const FIELDS: Array<[RegExp, RepositoryField]> = [
  [/^\/body\/name/, 'name'],
  [/^\/body\/url/, 'url'],
  [/^\/body\/ref/, 'ref'],
  [/^\/body\/credential\/token/, 'token'],
  [/^\/body\/credential\/username/, 'username'],
  [/^\/body\/credential\/sshPrivateKey/, 'sshPrivateKey'],
  [/^\/body\/credential/, 'access'],
  [/^\/body\/knownHosts/, 'knownHosts'],
];

/** The form's field a service error's JSON pointer names, if any. */
export function repositoryFieldOf(path: string): RepositoryField | undefined {
  return FIELDS.find(([pattern]) => pattern.test(path))?.[1];
}

export const AUTH_LABELS: Record<RepositoryAuth, string> = { none: 'none (public)', token: 'access token', ssh_key: 'SSH deploy key' };
