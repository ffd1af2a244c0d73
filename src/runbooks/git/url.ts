import { isIP } from 'node:net';

/**
 * A repository's address as pitcrew reaches it: HTTPS, or SSH (`ssh://` or scp-like `user@host:path`).
 * Nothing else: git's other transports read local files (`file://`, a path), run commands (`ext::`)
 * or send everything in the clear (`http://`, `git://`).
 */
export type RepositoryUrl =
  | { transport: 'https'; url: string; host: string; port: number }
  | { transport: 'ssh'; url: string; host: string; port: number };

const HOST_NAME = /^(?=.{1,253}$)[A-Za-z0-9](?:[A-Za-z0-9-]{0,61}[A-Za-z0-9])?(?:\.[A-Za-z0-9](?:[A-Za-z0-9-]{0,61}[A-Za-z0-9])?)*\.?$/;
const SSH_USER = /^[A-Za-z0-9_][A-Za-z0-9._-]{0,63}$/;
const SSH_URL = /^ssh:\/\/(?:([^@/]+)@)?(\[[^\]]+\]|[^:/]+)(?::(\d{1,5}))?(\/.*)$/i;
const SCP_LIKE = /^([^@/:]+)@(\[[^\]]+\]|[^:/]+):(.+)$/;
const HTTPS_ADVICE = 'use https://host/path (with a read-only token as credential) or SSH: ssh://git@host/path or git@host:path (with a deploy key)';

/** The URL, parsed and rebuilt the way git will read it; or why it is refused. */
export function parseRepositoryUrl(raw: string): { url: RepositoryUrl } | { problem: string } {
  // eslint-disable-next-line no-control-regex -- control characters are what is refused
  if (/[\s\u0000-\u001f\u007f\\]/.test(raw)) return { problem: 'holds blanks, control characters or a backslash; give the URL alone, as the server shows it for cloning' };
  if (raw.startsWith('-')) return { problem: 'starts with "-", which git would take for an option; give the repository\'s URL' };
  const scheme = /^([A-Za-z][A-Za-z0-9+.-]*):\/\//.exec(raw)?.[1]?.toLowerCase();
  if (scheme === 'https') return https(raw);
  if (scheme === 'ssh') return ssh(raw);
  if (scheme === 'http') return { problem: 'is http://, which would send the token and the runbooks in the clear; use https://' };
  if (scheme !== undefined) return { problem: `uses ${scheme}://, which pitcrew does not read repositories over; ${HTTPS_ADVICE}` };
  if (/^[A-Za-z][A-Za-z0-9+.-]*::/.test(raw)) return { problem: `names a git remote helper ("${raw.split('::')[0]}::"), which could run commands; ${HTTPS_ADVICE}` };
  if (SCP_LIKE.test(raw)) return scpLike(raw);
  return { problem: `is not a repository URL pitcrew reads (a local path, or a host without a user); ${HTTPS_ADVICE}` };
}

function https(raw: string): { url: RepositoryUrl } | { problem: string } {
  let url: URL;
  try {
    url = new URL(raw);
  } catch {
    return { problem: 'is not a valid URL; give it as https://host[:port]/path' };
  }
  if (url.username || url.password) return { problem: 'holds a user name or token; remove it from the URL and give it as credential {token, username?}, which is stored sealed' };
  if (url.search || url.hash || raw.includes('#') || raw.includes('?')) return { problem: 'has a query or fragment (? or #); give the repository\'s URL without them' };
  const problem = hostProblem(url.hostname);
  if (problem) return { problem };
  // Rebuilt by the WHATWG parser, so git (curl) and the egress check read the same host.
  return { url: { transport: 'https', url: url.href, host: unbracket(url.hostname), port: url.port ? Number(url.port) : 443 } };
}

function ssh(raw: string): { url: RepositoryUrl } | { problem: string } {
  const match = SSH_URL.exec(raw);
  if (!match) return { problem: 'is not a valid SSH URL; give it as ssh://[user@]host[:port]/path' };
  const [, user, host = '', port, path = ''] = match;
  const problem = userProblem(user) ?? hostProblem(host) ?? portProblem(port) ?? pathProblem(path.slice(1));
  if (problem) return { problem };
  return { url: { transport: 'ssh', url: raw, host: unbracket(host), port: port ? Number(port) : 22 } };
}

function scpLike(raw: string): { url: RepositoryUrl } | { problem: string } {
  const [, user, host = '', path = ''] = SCP_LIKE.exec(raw)!;
  const problem = userProblem(user) ?? hostProblem(host) ?? pathProblem(path);
  if (problem) return { problem };
  return { url: { transport: 'ssh', url: raw, host: unbracket(host), port: 22 } };
}

function userProblem(user: string | undefined): string | undefined {
  if (user === undefined || SSH_USER.test(user)) return undefined;
  if (user.includes(':')) return 'holds a password after the user name; SSH repositories take a deploy key as credential {sshPrivateKey}';
  return `has the user name "${user}", which is not one an SSH server takes (letters, digits, . _ -)`;
}

function hostProblem(host: string): string | undefined {
  const bare = unbracket(host);
  if (host.startsWith('[')) return isIP(bare) === 6 ? undefined : `has the host ${host}, which is not an IPv6 address`;
  if (isIP(bare) === 4 || HOST_NAME.test(bare)) return undefined;
  return `has the host "${host}", which is not a host name or an IP address`;
}

function portProblem(port: string | undefined): string | undefined {
  if (port === undefined) return undefined;
  return Number(port) >= 1 && Number(port) <= 65535 ? undefined : `has the port ${port}; a port is 1 to 65535`;
}

function pathProblem(path: string): string | undefined {
  if (path === '' || path === '/') return 'has no repository path after the host';
  if (path.startsWith('-')) return 'has a repository path starting with "-", which the server would take for an option';
  return undefined;
}

function unbracket(host: string): string {
  return host.startsWith('[') ? host.slice(1, -1) : host;
}
