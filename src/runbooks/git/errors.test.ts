import { describe, expect, it } from 'vitest';
import { remoteFailure, type RepositoryLabel } from './errors.js';

const https: RepositoryLabel = { name: 'ops', url: 'https://git.example.com/acme/ops.git', transport: 'https', host: 'git.example.com', port: 443 };
const ssh: RepositoryLabel = { name: 'ops', url: 'ssh://git@git.example.com:2222/acme/ops.git', transport: 'ssh', host: 'git.example.com', port: 2222 };
const CHANGED = `@@@@@@@@@@@@@@@@@@@@@@@@@@@@@@@@@@@@@@@@@@@@@@@@@@@@@@@@@@@
@    WARNING: REMOTE HOST IDENTIFICATION HAS CHANGED!     @
@@@@@@@@@@@@@@@@@@@@@@@@@@@@@@@@@@@@@@@@@@@@@@@@@@@@@@@@@@@
Host key for [git.example.com]:2222 has changed and you have requested strict checking.
Host key verification failed.
fatal: Could not read from remote repository.`;

/** OpenSSH 9.2's words for an ED25519 host key when known_hosts holds an ECDSA key of the name (sshd run by hand). */
const OTHER_TYPE = `@@@@@@@@@@@@@@@@@@@@@@@@@@@@@@@@@@@@@@@@@@@@@@@@@@@@@@@@@@@
@    WARNING: REMOTE HOST IDENTIFICATION HAS CHANGED!     @
@@@@@@@@@@@@@@@@@@@@@@@@@@@@@@@@@@@@@@@@@@@@@@@@@@@@@@@@@@@
IT IS POSSIBLE THAT SOMEONE IS DOING SOMETHING NASTY!
Someone could be eavesdropping on you right now (man-in-the-middle attack)!
It is also possible that a host key has just been changed.
The fingerprint for the ED25519 key sent by the remote host is
SHA256:/aMQ7rmdEDFVLGAfon1bcv3SW1qIjDHkheBBs5Vsg3Q.
Please contact your system administrator.
Add correct host key in /tmp/pitcrew-ssh-x/known_hosts to get rid of this message.
Offending ECDSA key in /tmp/pitcrew-ssh-x/known_hosts:1
  remove with:
  ssh-keygen -f "/tmp/pitcrew-ssh-x/known_hosts" -R "[git.example.com]:2222"
Host key for [git.example.com]:2222 has changed and you have requested strict checking.
Host key verification failed.
fatal: Could not read from remote repository.`;

/** git's, curl's and ssh's words (LC_ALL=C, git 2.39, OpenSSH 9.2) and what pitcrew makes of them. */
describe('remoteFailure', () => {
  it.each([
    [https, "fatal: unable to access 'https://git.example.com/acme/ops.git/': Could not resolve host: git.example.com", 'unreachable', 'the host git.example.com was not found (DNS)'],
    [https, "fatal: unable to access 'https://git.example.com/acme/ops.git/': Failed to connect to git.example.com port 443 after 2 ms: Couldn't connect to server", 'unreachable', 'nothing answered at git.example.com:443 (connection refused)'],
    [https, "fatal: unable to access 'https://git.example.com/acme/ops.git/': Failed to connect to git.example.com port 443 after 130001 ms: Connection timed out", 'unreachable', 'the connection to git.example.com:443 timed out'],
    [https, "fatal: unable to access 'https://git.example.com/acme/ops.git/': server certificate verification failed. CAfile: none CRLfile: none", 'unreachable', 'PITCREW_GIT_CA_FILE'],
    [https, "fatal: unable to access 'https://git.example.com/acme/ops.git/': SSL certificate problem: self-signed certificate", 'unreachable', 'PITCREW_GIT_CA_FILE'],
    [https, "fatal: could not read Username for 'https://git.example.com': terminal prompts disabled", 'refused', 'HTTP 401'],
    [https, "remote: Invalid username or password.\nfatal: Authentication failed for 'https://git.example.com/acme/ops.git/'", 'refused', 'HTTP 401'],
    [https, "fatal: unable to access 'https://git.example.com/acme/ops.git/': The requested URL returned error: 403", 'refused', 'HTTP 403'],
    [https, "remote: Repository not found.\nfatal: repository 'https://git.example.com/acme/ops.git/' not found", 'refused', 'the server has no repository there'],
    [https, "fatal: unable to access 'https://git.example.com/acme/ops.git/': The requested URL returned error: 301", 'unreachable', 'redirects elsewhere'],
    [https, "fatal: unable to access 'https://git.example.com/acme/ops.git/': The requested URL returned error: 502", 'unreachable', 'the server answered HTTP 502'],
    [ssh, 'ssh: Could not resolve hostname git.example.com: Name or service not known\r\nfatal: Could not read from remote repository.', 'unreachable', 'was not found (DNS)'],
    [ssh, 'ssh: connect to host 10.0.0.5 port 2222: Connection refused\r\nfatal: Could not read from remote repository.', 'unreachable', 'nothing answered at git.example.com:2222'],
    [ssh, 'ssh: connect to host 10.0.0.5 port 2222: Connection timed out\r\nfatal: Could not read from remote repository.', 'unreachable', 'timed out'],
    [ssh, 'root@10.0.0.5: Permission denied (publickey).\r\nfatal: Could not read from remote repository.', 'refused', 'deploy keys'],
    [ssh, 'ERROR: Repository not found.\nfatal: Could not read from remote repository.', 'refused', 'the server has no repository there'],
    [ssh, 'No ED25519 host key is known for [git.example.com]:2222 and you have requested strict checking.\r\nHost key verification failed.', 'host_key', 'ssh-keyscan -p 2222 git.example.com'],
    [ssh, CHANGED, 'host_key', 'does not match the repository\'s knownHosts'],
    [ssh, OTHER_TYPE, 'host_key', 'offered its ED25519 host key (SHA256:/aMQ7rmdEDFVLGAfon1bcv3SW1qIjDHkheBBs5Vsg3Q), and the repository\'s knownHosts has no ED25519 key for it, only an ECDSA one'],
    [ssh, OTHER_TYPE, 'host_key', 'add the line `ssh-keyscan -t ed25519 -p 2222 git.example.com` prints to knownHosts'],
    [ssh, 'WARNING: RSA key found for host [git.example.com]:2222\r\nin /tmp/k:1\r\nRSA key fingerprint SHA256:abc.\r\nNo ED25519 host key is known for [git.example.com]:2222 and you have requested strict checking.\r\nHost key verification failed.', 'host_key', 'offered its ED25519 host key, and the repository\'s knownHosts has no ED25519 key for it, only an RSA one'],
    [ssh, 'kex_exchange_identification: Connection closed by remote host', 'unreachable', 'the connection to git.example.com:2222 failed (kex_exchange_identification'],
    [https, 'fatal: protocol error: bad pack header', 'unreachable', 'git said "fatal: protocol error: bad pack header"'],
  ])('%#: reads %j', (repository, stderr, problem, words) => {
    const error = remoteFailure(repository, { stderr, timedOut: false, timeoutSeconds: 30 });
    expect(error.problem).toBe(problem);
    expect(error.message).toContain(words);
    expect(error.message.startsWith(`repository "ops" (${repository.url})`)).toBe(true);
  });

  it('says the server did not answer in time, whatever git said before it was killed', () => {
    expect(remoteFailure(https, { stderr: 'Cloning...', timedOut: true, timeoutSeconds: 30 })).toMatchObject({ problem: 'unreachable', message: expect.stringContaining('no answer within 30 s (PITCREW_GIT_TIMEOUT_SECONDS)') });
  });
});
