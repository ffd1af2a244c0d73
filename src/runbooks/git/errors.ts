/** Why a runbook could not be read from a repository: what the execution stage records, and what it tells people. */
export const FETCH_PROBLEMS = [
  'unreachable', 'refused', 'host_key', 'ref_missing', 'path_missing', 'not_a_file', 'symlink', 'path_escape', 'too_big', 'not_text', 'no_repository', 'git_missing',
] as const;
export type FetchProblem = (typeof FETCH_PROBLEMS)[number];

/**
 * A runbook that could not be read, with a message that names the repository, the ref and the path
 * and says what to do. Messages never hold the token or the key: git's own words are masked
 * before they are quoted (connection.ts).
 */
export class RunbookFetchError extends Error {
  constructor(readonly problem: FetchProblem, message: string) {
    super(message);
    this.name = 'RunbookFetchError';
  }
}

/** How a repository is named in messages: its name and URL (which never holds a credential). */
export interface RepositoryLabel {
  name: string;
  url: string;
  transport: 'https' | 'ssh';
  host: string;
  port: number;
}

export function labelOf(repository: Pick<RepositoryLabel, 'name' | 'url'>): string {
  return `repository "${repository.name}" (${repository.url})`;
}

/** What a git command talking to the server ended with. */
export interface RemoteOutcome {
  stderr: string;
  timedOut: boolean;
  timeoutSeconds: number;
}

/**
 * A failed `git ls-remote` or `git fetch` as the problem it is, from git's, curl's and ssh's own
 * words (git runs with LC_ALL=C, so they are English). `stderr` is masked already.
 */
export function remoteFailure(repository: RepositoryLabel, outcome: RemoteOutcome): RunbookFetchError {
  const label = labelOf(repository);
  const at = `${repository.host}:${repository.port}`;
  const unreachable = (why: string) => new RunbookFetchError('unreachable', `${label} could not be reached: ${why}; check the URL and that this pitcrew node can reach the server`);
  const refused = (why: string) => new RunbookFetchError('refused', `${label} refused pitcrew: ${why}`);
  const { stderr } = outcome;
  if (outcome.timedOut) return unreachable(`no answer within ${outcome.timeoutSeconds} s (PITCREW_GIT_TIMEOUT_SECONDS)`);
  const types = hostKeyTypes(stderr);
  if (types) {
    const keyscan = `ssh-keyscan -t ${types.offered.toLowerCase()}${repository.port === 22 ? '' : ` -p ${repository.port}`} ${repository.host}`;
    return new RunbookFetchError('host_key', `${label}: the SSH server at ${at} offered its ${types.offered} host key${types.fingerprint ? ` (${types.fingerprint})` : ''}, and the repository's knownHosts has no ${types.offered} key for it, only ${article(types.known)} ${types.known} one. ssh takes a key of another type for a changed key, though most often the server just has ${article(types.offered)} ${types.offered} key that knownHosts lacks: add the line \`${keyscan}\` prints to knownHosts, once its fingerprint matches the one the server's administrator gives`);
  }
  if (/REMOTE HOST IDENTIFICATION HAS CHANGED/.test(stderr)) {
    return new RunbookFetchError('host_key', `${label}: the SSH server at ${at} showed a host key that does not match the repository's knownHosts. The server's key changed, or something is in between: check with the server's administrator before you change knownHosts`);
  }
  if (/host key is known for|Host key verification failed/i.test(stderr)) {
    return new RunbookFetchError('host_key', `${label}: the SSH server at ${at} showed a host key the repository's knownHosts does not hold. Add the server's key (ssh-keyscan${repository.port === 22 ? '' : ` -p ${repository.port}`} ${repository.host}, checked against a fingerprint you trust) to knownHosts`);
  }
  if (/Permission denied \(publickey/.test(stderr)) return refused('the SSH server did not accept the deploy key; add its public key to the repository\'s deploy keys (read access is enough), or give the repository another key');
  if (/could not read (Username|Password)|Authentication failed|returned error: 401/.test(stderr)) {
    return refused('the server asked for a credential and did not accept the one given (HTTP 401); give a token that may read the repository as credential {token, username?}');
  }
  if (/returned error: 403/.test(stderr)) return refused('the server refused access (HTTP 403); give a token that may read the repository');
  if (/returned error: 404|Repository not found|does not appear to be a git repository|repository .* not found/i.test(stderr)) {
    return refused('the server has no repository there, or will not show it to this credential; check the URL and that the token or deploy key may read the repository');
  }
  if (/returned error: 30[12378]|redirect/i.test(stderr)) return unreachable('the server redirects elsewhere, which pitcrew does not follow; give the URL it redirects to');
  const status = /returned error: (\d{3})/.exec(stderr)?.[1];
  if (status) return unreachable(`the server answered HTTP ${status}`);
  if (/Could not resolve host(name)?/i.test(stderr)) return unreachable(`the host ${repository.host} was not found (DNS)`);
  if (/SSL certificate problem|certificate verif|server certificate|unable to get local issuer/i.test(stderr)) {
    return unreachable('the server\'s TLS certificate is not trusted; if it is signed by a private CA, the operator gives that CA with PITCREW_GIT_CA_FILE');
  }
  if (/timed out/i.test(stderr)) return unreachable(`the connection to ${at} timed out`);
  if (/Connection refused|Failed to connect|Couldn't connect/i.test(stderr)) return unreachable(`nothing answered at ${at} (connection refused)`);
  if (/No route to host|Network is unreachable|Connection reset|Connection closed|kex_exchange_identification/i.test(stderr)) return unreachable(`the connection to ${at} failed (${lastLine(stderr)})`);
  return unreachable(`git said "${lastLine(stderr)}"`);
}

/**
 * The key type the server offered and the other type knownHosts holds, when ssh refused a host key
 * for its type. OpenSSH 9.2 (ssh -o StrictHostKeyChecking=yes) says it two ways, both seen against
 * sshd with an ED25519 host key: with a known key of another type for the same name, "REMOTE HOST
 * IDENTIFICATION HAS CHANGED" ... "The fingerprint for the ED25519 key sent by the remote host is
 * SHA256:…" ... "Offending ECDSA key in …"; or (sshconnect.c, show_other_keys) "WARNING: ECDSA key
 * found for host …" ... "No ED25519 host key is known for … and you have requested strict checking".
 */
export function hostKeyTypes(stderr: string): { offered: string; known: string; fingerprint: string | undefined } | undefined {
  const sent = /The fingerprint for the (\S+) key sent by the remote host is\s+(SHA256:[A-Za-z0-9+/=]+)/.exec(stderr);
  const offered = sent?.[1] ?? /No (\S+) host key is known for/.exec(stderr)?.[1];
  const known = /Offending (\S+) key in/.exec(stderr)?.[1] ?? /WARNING: (\S+) key found for host/.exec(stderr)?.[1];
  if (!offered || !known || offered === known) return undefined;
  return { offered, known, fingerprint: sent?.[2] };
}

function article(word: string): string {
  return /^[AEFHILMNORSX]/.test(word) ? 'an' : 'a';
}

/** The last line git wrote, as the most specific one; short. */
export function lastLine(stderr: string): string {
  const lines = stderr.split('\n').map((line) => line.trim()).filter((line) => line !== '');
  return (lines.at(-1) ?? 'nothing').slice(0, 300);
}
