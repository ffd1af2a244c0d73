import { PitcrewError, type FieldError } from '../../errors/catalogue.js';
import type { RepositoryRow } from '../../store/schema.js';
import { refProblem } from './names.js';
import { DEFAULT_TOKEN_USERNAME, type AuthKind, type CredentialInput, type RepositoryInput, type RepositoryPatch, type StoredCredential } from './schema.js';
import { hostKeyAlias, knownHostsProblem, normalisePrivateKey, privateKeyProblem } from './ssh-material.js';
import { parseRepositoryUrl, type RepositoryUrl } from './url.js';

/** A repository's fields once checked: the URL as git will read it, the credential as it is sealed. */
export interface CheckedRepository {
  name: string;
  url: RepositoryUrl;
  ref: string;
  /** undefined: keep the stored one (a PATCH that leaves it); null: none. */
  credential: StoredCredential | null | undefined;
  auth: AuthKind;
  knownHosts: string | null;
}

// Printable ASCII without blanks: a token goes into an HTTP header, where a line break would add headers.
const TOKEN = /^[\x21-\x7e]+$/;

export function checkNewRepository(input: RepositoryInput): CheckedRepository {
  return check({
    name: input.name,
    url: input.url,
    ref: input.ref,
    credential: input.credential === undefined ? { given: null } : { given: input.credential },
    knownHosts: input.knownHosts ?? null,
  });
}

/** The repository with the patch applied, checked whole: a new URL must fit the credential and knownHosts kept. */
export function checkPatchedRepository(current: RepositoryRow, patch: RepositoryPatch): CheckedRepository {
  const url = patch.url ?? current.url;
  const parsed = parseRepositoryUrl(url);
  const toHttps = patch.url !== undefined && 'url' in parsed && parsed.url.transport === 'https';
  return check({
    name: patch.name ?? current.name,
    url,
    ref: patch.ref ?? current.ref,
    credential: patch.credential === undefined ? { stored: current.auth as AuthKind } : { given: patch.credential },
    // A URL moved to HTTPS drops the host keys, which HTTPS has no use for.
    knownHosts: patch.knownHosts !== undefined ? patch.knownHosts : toHttps ? null : current.known_hosts,
  });
}

interface Fields {
  name: string;
  url: string;
  ref: string;
  credential: { given: CredentialInput | null } | { stored: AuthKind };
  knownHosts: string | null;
}

function check(fields: Fields): CheckedRepository {
  const errors: FieldError[] = [];
  const name = fields.name.trim();
  if (name === '') errors.push({ path: '/body/name', message: 'holds only blanks; give the repository a name to find it by' });
  const parsed = parseRepositoryUrl(fields.url);
  if ('problem' in parsed) errors.push({ path: '/body/url', message: parsed.problem });
  const ref = refProblem(fields.ref);
  if (ref) errors.push({ path: '/body/ref', message: ref });
  const url = 'url' in parsed ? parsed.url : undefined;
  const credential = 'given' in fields.credential ? credentialOf(fields.credential.given, url, errors) : undefined;
  const auth: AuthKind = 'stored' in fields.credential ? fields.credential.stored : (credential?.kind ?? 'none');
  if (url && 'stored' in fields.credential) storedCredentialFits(auth, url, errors);
  if (url) knownHostsFit(fields.knownHosts, url, errors);
  if (errors.length > 0) {
    const more = errors.length > 1 ? ` (and ${errors.length - 1} more)` : '';
    throw new PitcrewError('PITCREW_ERR_VALIDATION', `${errors[0]!.path}: ${errors[0]!.message}${more}`, { fieldErrors: errors });
  }
  return { name, url: url!, ref: fields.ref, credential, auth, knownHosts: fields.knownHosts };
}

function credentialOf(given: CredentialInput | null, url: RepositoryUrl | undefined, errors: FieldError[]): StoredCredential | null {
  if (given === null) return null;
  const { token, username, sshPrivateKey } = given;
  const at = (field: string, message: string) => errors.push({ path: `/body/credential/${field}`, message });
  if (token !== undefined && sshPrivateKey !== undefined) {
    at('sshPrivateKey', 'comes with a token; give {token} for an HTTPS URL or {sshPrivateKey} for an SSH URL, not both');
    return null;
  }
  if (token === undefined && sshPrivateKey === undefined) {
    errors.push({ path: '/body/credential', message: 'is empty; give {token, username?} for an HTTPS URL, {sshPrivateKey} for an SSH URL, or leave credential out for a public repository' });
    return null;
  }
  if (token !== undefined) {
    if (url?.transport === 'ssh') at('token', 'is for HTTPS repositories; an SSH URL takes {sshPrivateKey}, a deploy key');
    else if (!TOKEN.test(token)) at('token', 'holds blanks, line breaks or characters outside ASCII; give the token exactly as the server issued it');
    if (username !== undefined && !/^[\x21-\x39\x3b-\x7e]+$/.test(username)) at('username', 'holds a blank, a ":" or characters outside ASCII');
    return { kind: 'token', token, username: username ?? DEFAULT_TOKEN_USERNAME };
  }
  if (username !== undefined) at('username', 'goes with a token; an SSH URL names its user in the URL (git@host:path)');
  if (url?.transport === 'https') at('sshPrivateKey', 'is for SSH repositories; an HTTPS URL takes {token, username?}');
  else {
    const problem = privateKeyProblem(sshPrivateKey!);
    if (problem) at('sshPrivateKey', problem);
  }
  return { kind: 'ssh_key', sshPrivateKey: normalisePrivateKey(sshPrivateKey!) };
}

/** A new URL with the credential kept: the credential must still be the kind the transport takes. */
function storedCredentialFits(auth: AuthKind, url: RepositoryUrl, errors: FieldError[]): void {
  if (auth === 'token' && url.transport === 'ssh') {
    errors.push({ path: '/body/credential', message: "the repository's credential is a token, which an SSH URL does not take: send {sshPrivateKey} (or null) with the new URL" });
  }
  if (auth === 'ssh_key' && url.transport === 'https') {
    errors.push({ path: '/body/credential', message: "the repository's credential is an SSH key, which an HTTPS URL does not take: send {token} (or null) with the new URL" });
  }
}

function knownHostsFit(knownHosts: string | null, url: RepositoryUrl, errors: FieldError[]): void {
  const alias = hostKeyAlias(url.host, url.port);
  if (url.transport === 'https') {
    if (knownHosts !== null) errors.push({ path: '/body/knownHosts', message: 'is for SSH URLs; HTTPS checks the server with its certificate' });
    return;
  }
  if (knownHosts === null) {
    errors.push({ path: '/body/knownHosts', message: `is required for an SSH URL: the server's host keys, checked on every connection (get them with ssh-keyscan${url.port === 22 ? '' : ` -p ${url.port}`} ${url.host} and check them against fingerprints you trust)` });
    return;
  }
  const problem = knownHostsProblem(knownHosts, alias);
  if (problem) errors.push({ path: '/body/knownHosts', message: problem });
}
