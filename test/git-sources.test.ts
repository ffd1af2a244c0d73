import { createHash } from 'node:crypto';
import fs from 'node:fs';
import net from 'node:net';
import path from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { GIT_DEFAULTS } from '../src/config/config.js';
import { RunbookFetchError, GitSources, type EgressGate, type RunbookSource } from '../src/runbooks/git/sources.js';
import { startTestEnv, type TestEnv } from './support/app.js';
import { testDialects } from './support/databases.js';
import { makeSshKey, PINNED_HOST, startGitServers, startHttpsGitServer, type GitServers, type TestRepository } from './support/git-server.js';
import { freePort } from './support/process.js';
import { waitFor } from './support/wait.js';

/*
 * Issue 20, runbooks read from a tenant's git repository (docs/runbooks.md#git-repositories):
 * against real servers on loopback (git http-backend behind HTTPS with a token, OpenSSH's sshd with
 * a deploy key), every read asks the server where the ref is and reads the file from git's objects
 * at that commit, fetching a commit only once; what is not a regular UTF-8 file inside the
 * repository is refused, and every failure says what to change without showing the secret.
 */
/** Live processes whose command line holds `text`, with their command line and environment (read as the tests' user). */
function processesNaming(text: string): Array<{ cmdline: string; environ: string }> {
  return fs.readdirSync('/proc').filter((entry) => /^\d+$/.test(entry)).flatMap((pid) => {
    try {
      const cmdline = fs.readFileSync(`/proc/${pid}/cmdline`, 'utf8').replaceAll('\0', ' ');
      return cmdline.includes(text) ? [{ cmdline, environ: fs.readFileSync(`/proc/${pid}/environ`, 'utf8').replaceAll('\0', '\n') }] : [];
    } catch {
      return [];
    }
  });
}
const sha256 = (bytes: string | Buffer) => createHash('sha256').update(bytes).digest('hex');
const DISK = '#!/bin/sh\nset -eu\ndf -h /\n';
const RESTART = '#!/bin/bash\nsystemctl restart "${Service:?}"\necho "redémarré ✓"\n';

describe.each(testDialects())('runbooks read from git repositories on %s', (dialect) => {
  let servers: GitServers;
  let env: TestEnv;
  let ops: TestRepository;
  let httpsId: string;
  let sshId: string;
  let first: string;
  /** Every message a read failed with: none may hold a secret. */
  const messages: string[] = [];

  beforeAll(async () => {
    servers = await startGitServers();
    ops = servers.repository('ops');
    first = ops.commit({
      'runbooks/disk.sh': DISK,
      'runbooks/restart.sh': RESTART,
      'runbooks/lib/common.sh': 'log() { echo "$@"; }\n',
      'link.sh': { symlink: 'runbooks/disk.sh' },
      'linked': { symlink: 'runbooks' },
      'escape.sh': { symlink: '../../etc/passwd' },
      'huge.sh': `#!/bin/sh\n${'#'.repeat(256 * 1024)}\n`,
      'exactly-256k.sh': `#!/bin/sh\n${'#'.repeat(256 * 1024 - 11)}\n`,
      'tool.bin': Buffer.from([0x7f, 0x45, 0x4c, 0x46, 0x02, 0x01, 0x00, 0x00]),
      'latin1.sh': Buffer.from('echo "caf\xe9"\n', 'latin1'),
      'bom.sh': Buffer.concat([Buffer.from([0xef, 0xbb, 0xbf]), Buffer.from('echo bom\n')]),
      'vendor/shared': { gitlink: 'c0ffee'.padEnd(40, '0') },
    });
    ops.tag('v1.0');
    env = await startTestEnv(dialect, { git: { caPem: servers.https.caPem, timeoutSeconds: 15 } });
    httpsId = (await connect({ name: 'ops https', url: servers.https.url('ops'), ref: 'main', credential: { token: servers.token } })).id;
    sshId = (await connect({ name: 'ops ssh', url: servers.ssh.url('ops'), ref: 'main', credential: { sshPrivateKey: servers.deployKey.privateKey }, knownHosts: servers.ssh.knownHosts })).id;
  });
  afterAll(async () => {
    await env.close();
    await servers.close();
  });

  async function connect(body: Record<string, unknown>): Promise<{ id: string }> {
    const made = await env.api('POST', '/api/v1/repositories', body);
    expect(made.statusCode, made.body).toBe(201);
    return made.json();
  }
  const read = (source: RunbookSource, tenantId = env.tenant.tenantId) => env.app.context.gitSources.read(tenantId, source);
  async function failure(source: RunbookSource, tenantId?: string): Promise<RunbookFetchError> {
    const error = await read(source, tenantId).then(() => undefined, (e: unknown) => e);
    expect(error).toBeInstanceOf(RunbookFetchError);
    messages.push((error as Error).message);
    return error as RunbookFetchError;
  }

  it('reads a runbook at the repository’s branch, at a tag and at another branch, with the commit and the SHA-256 of its bytes', async () => {
    const atMain = await read({ repositoryId: httpsId, path: 'runbooks/restart.sh' });
    expect(atMain).toEqual({ repositoryId: httpsId, repositoryName: 'ops https', path: 'runbooks/restart.sh', ref: 'main', commit: first, script: RESTART, sha256: sha256(RESTART) });
    // An annotated tag names its commit, not the tag object.
    expect(await read({ repositoryId: httpsId, path: 'runbooks/disk.sh', ref: 'v1.0' })).toMatchObject({ ref: 'v1.0', commit: first, script: DISK, sha256: sha256(DISK) });
    expect(await read({ repositoryId: sshId, path: 'runbooks/restart.sh', ref: 'refs/tags/v1.0' })).toMatchObject({ commit: first, script: RESTART });
    // A BOM is kept: the script's UTF-8 bytes are the file's, so its sha256 is the file's.
    const bom = await read({ repositoryId: httpsId, path: 'bom.sh' });
    expect(bom.script).toBe('\ufeffecho bom\n');
    expect(bom.sha256).toBe(sha256(Buffer.concat([Buffer.from([0xef, 0xbb, 0xbf]), Buffer.from('echo bom\n')])));
    expect((await read({ repositoryId: httpsId, path: 'exactly-256k.sh' })).script).toHaveLength(256 * 1024);
  });

  it('picks up a commit pushed between two reads, and fetches each commit once (HTTPS)', async () => {
    const repo = servers.repository('pushes');
    repo.commit({ 'fix.sh': 'echo one\n' });
    const { id } = await connect({ name: 'pushes', url: servers.https.url('pushes'), ref: 'main', credential: { token: servers.token } });
    expect((await read({ repositoryId: id, path: 'fix.sh' })).script).toBe('echo one\n');
    expect(servers.https.count('pushes', 'fetch')).toBe(1);
    // The same commit again: the server is asked where main is, and nothing is downloaded.
    expect((await read({ repositoryId: id, path: 'fix.sh' })).script).toBe('echo one\n');
    expect(servers.https.count('pushes', 'ls-refs')).toBe(2);
    expect(servers.https.count('pushes', 'fetch')).toBe(1);

    const second = repo.commit({ 'fix.sh': 'echo two\n' });
    expect(await read({ repositoryId: id, path: 'fix.sh' })).toMatchObject({ commit: second, script: 'echo two\n', sha256: sha256('echo two\n') });
    expect(servers.https.count('pushes', 'fetch')).toBe(2);
    // No push, no download: every request went to git-upload-pack.
    expect(servers.https.requests.filter((r) => r.service !== 'git-upload-pack')).toEqual([]);
  });

  it('picks up a commit pushed between two reads over SSH, with one connection for an unchanged commit', async () => {
    const repo = servers.repository('ssh-pushes');
    repo.commit({ 'fix.sh': 'echo one\n' });
    const { id } = await connect({ name: 'ssh pushes', url: servers.ssh.url('ssh-pushes'), ref: 'main', credential: { sshPrivateKey: servers.deployKey.privateKey }, knownHosts: servers.ssh.knownHosts });
    const connections = () => servers.ssh.commands().filter((command) => command === "git-upload-pack '/ssh-pushes.git'").length;
    expect((await read({ repositoryId: id, path: 'fix.sh' })).script).toBe('echo one\n');
    expect(connections()).toBe(2);
    expect((await read({ repositoryId: id, path: 'fix.sh' })).script).toBe('echo one\n');
    expect(connections()).toBe(3);
    const second = repo.commit({ 'fix.sh': 'echo two\n' });
    expect(await read({ repositoryId: id, path: 'fix.sh' })).toMatchObject({ commit: second, script: 'echo two\n' });
    expect(connections()).toBe(5);
    // Each read's key file and known_hosts were in a directory of their own, removed after it.
    expect(fs.readdirSync(path.join(env.database.dataDir, 'git', 'tmp'))).toEqual([]);
  });

  it('serves concurrent reads of a new commit from one fetch', async () => {
    const repo = servers.repository('busy');
    repo.commit({ 'a.sh': 'echo a\n', 'b.sh': 'echo b\n' });
    const { id } = await connect({ name: 'busy', url: servers.https.url('busy'), ref: 'main', credential: { token: servers.token } });
    const reads = await Promise.all(['a.sh', 'b.sh', 'a.sh', 'b.sh', 'a.sh'].map((path) => read({ repositoryId: id, path })));
    expect(reads.map((r) => r.script)).toEqual(['echo a\n', 'echo b\n', 'echo a\n', 'echo b\n', 'echo a\n']);
    expect(servers.https.count('busy', 'fetch')).toBe(1);
  });

  it.each([
    ['missing.sh', 'path_missing', /^missing\.sh does not exist, at main \(commit [0-9a-f]{12}\) of repository "ops https" \(https:.*\): push it or change the rule's path$/],
    ['runbooks/nope/x.sh', 'path_missing', /there is no folder runbooks\/nope/],
    ['runbooks/disk.sh/x', 'path_missing', /runbooks\/disk\.sh is a file, not a folder/],
    ['runbooks', 'not_a_file', /^runbooks is a folder; give the path of the script file in it/],
    ['runbooks/lib', 'not_a_file', /is a folder/],
    ['vendor/shared', 'not_a_file', /^vendor\/shared is a submodule \(another repository\), not a file/],
    ['vendor/shared/run.sh', 'not_a_file', /^vendor\/shared\/run\.sh is inside vendor\/shared, which is a submodule \(another repository\); connect that repository instead/],
    ['link.sh', 'symlink', /^link\.sh is a symbolic link; pitcrew runs only regular files/],
    ['escape.sh', 'symlink', /is a symbolic link/],
    ['linked/disk.sh', 'symlink', /^linked\/disk\.sh goes through linked, which is a symbolic link/],
    ['../etc/passwd', 'path_escape', /^path "\.\.\/etc\/passwd" holds a "\.\." part/],
    ['runbooks/../../x.sh', 'path_escape', /holds a "\.\." part/],
    ['/etc/passwd', 'path_escape', /starts with "\/"/],
    ['runbooks//disk.sh', 'path_escape', /holds "\/\/"/],
    ['runbooks\\disk.sh', 'path_escape', /backslash/],
    ['huge.sh', 'too_big', /^huge\.sh is 256\.0 KiB \(262155 bytes\); a runbook may be at most 256 KiB/],
    ['tool.bin', 'not_text', /^tool\.bin at main \(commit [0-9a-f]{12}\) of repository "ops https" .* is binary \(it holds NUL bytes\)/],
    ['latin1.sh', 'not_text', /is not UTF-8 text; save the script as UTF-8/],
  ])('refuses %s as %s', async (path, problem, message) => {
    const error = await failure({ repositoryId: httpsId, path });
    expect(error).toMatchObject({ problem, message: expect.stringMatching(message) });
  });

  it('says when the ref does not exist, naming the repository and what to do', async () => {
    const error = await failure({ repositoryId: sshId, path: 'runbooks/disk.sh', ref: 'release-9' });
    expect(error).toMatchObject({ problem: 'ref_missing', message: `ref release-9 does not exist in repository "ops ssh" (${servers.ssh.url('ops')}): push it or change the rule's ref` });
    expect(await failure({ repositoryId: httpsId, path: 'runbooks/disk.sh', ref: '-upload-pack=touch' })).toMatchObject({ problem: 'ref_missing', message: expect.stringMatching(/starts with "-"/) });
  });

  it('pins a commit given as ref: fetched by its id over HTTPS and SSH (protocol v2), asked for at each read, run as it was after later pushes', async () => {
    const repo = servers.repository('pinned');
    const pinned = repo.commit({ 'fix.sh': 'echo pinned\n' });
    repo.commit({ 'fix.sh': 'echo later\n' });
    const overHttps = await connect({ name: 'commit-pinned https', url: servers.https.url('pinned'), ref: 'main', credential: { token: servers.token } });
    const overSsh = await connect({ name: 'commit-pinned ssh', url: servers.ssh.url('pinned'), ref: 'main', credential: { sshPrivateKey: servers.deployKey.privateKey }, knownHosts: servers.ssh.knownHosts });
    // No branch or tag points at it any more: only a fetch by id reaches it.
    expect(await read({ repositoryId: overHttps.id, path: 'fix.sh', ref: pinned })).toEqual({ repositoryId: overHttps.id, repositoryName: 'commit-pinned https', path: 'fix.sh', ref: pinned, commit: pinned, script: 'echo pinned\n', sha256: sha256('echo pinned\n') });
    expect(await read({ repositoryId: overSsh.id, path: 'fix.sh', ref: pinned.toUpperCase() })).toMatchObject({ commit: pinned, script: 'echo pinned\n' });
    // Read again from the cache, the server still asked (as a ref is looked up each time): a credential revoked since is noticed.
    const asked = () => servers.https.requests.filter((r) => r.path.startsWith('/pinned.git/') && r.status === 200).length;
    const before = asked();
    expect((await read({ repositoryId: overHttps.id, path: 'fix.sh', ref: pinned })).script).toBe('echo pinned\n');
    expect(asked()).toBeGreaterThan(before);
    expect(await env.app.context.gitSources.test(env.tenant.tenantId, overHttps.id, pinned)).toEqual({ ref: pinned, fullName: pinned, commit: pinned });

    const absent = 'f'.repeat(40);
    expect(await failure({ repositoryId: overHttps.id, path: 'fix.sh', ref: absent })).toMatchObject({
      problem: 'ref_missing', message: expect.stringMatching(new RegExp(`^commit ${absent} could not be fetched from repository "commit-pinned https" .*: the repository has no such commit, or its server gives commits only by branch or tag name .*Tag the commit \\(git tag runbooks-pinned ${absent.slice(0, 12)} && git push origin runbooks-pinned\\) and set the ref to the tag$`)),
    });
    expect(await failure({ repositoryId: overHttps.id, path: 'fix.sh', ref: pinned.slice(0, 10) })).toMatchObject({
      problem: 'ref_missing', message: expect.stringContaining(`ref "${pinned.slice(0, 10)}" looks like an abbreviated commit id; give the whole id (git rev-parse ${pinned.slice(0, 10)} prints it) to pin that commit, or tag the commit and give the tag`),
    });
  });

  it('says a server that speaks only protocol v0 does not give a pinned commit by id, and to tag it', async () => {
    const repo = servers.repository('legacy-pin');
    const pinned = repo.commit({ 'fix.sh': 'echo pinned\n' });
    repo.commit({ 'fix.sh': 'echo later\n' });
    const old = await startHttpsGitServer({ root: servers.root, token: servers.token, protocolV2: false });
    const legacy = await startTestEnv(dialect, { git: { caPem: old.caPem } });
    try {
      // A v0 server gives the commits its refs point at: one no ref points at any more is refused.
      const made = await legacy.api('POST', '/api/v1/repositories', { name: 'legacy pin', url: old.url('legacy-pin'), ref: pinned, credential: { token: servers.token } });
      const error = await legacy.app.context.gitSources.read(legacy.tenant.tenantId, { repositoryId: made.json().id, path: 'fix.sh' }).catch((e: unknown) => e);
      expect(error).toMatchObject({ problem: 'ref_missing', message: expect.stringMatching(/its server gives commits only by branch or tag name \(git protocol v0, without uploadpack\.allowReachableSHA1InWant\)\. Tag the commit/) });
    } finally {
      await legacy.close();
      await old.close();
    }
  });

  it('refuses a repository of another tenant, or one that does not exist, as no_repository', async () => {
    const other = await env.addTenant(`git-other-${dialect}`);
    expect(await failure({ repositoryId: httpsId, path: 'runbooks/disk.sh' }, other.tenantId)).toMatchObject({ problem: 'no_repository', message: expect.stringMatching(/does not exist in this tenant/) });
    expect(await failure({ repositoryId: '01900000-0000-7000-8000-000000000000', path: 'x.sh' })).toMatchObject({ problem: 'no_repository' });
  });

  it('says when the server cannot be reached, refuses the credential, or shows another host key', async () => {
    const closedPort = await freePort();
    const unreachable = await connect({ name: 'closed', url: `https://127.0.0.1:${closedPort}/ops.git`, ref: 'main' });
    expect(await failure({ repositoryId: unreachable.id, path: 'x.sh' })).toMatchObject({
      problem: 'unreachable', message: `repository "closed" (https://127.0.0.1:${closedPort}/ops.git) could not be reached: nothing answered at 127.0.0.1:${closedPort} (connection refused); check the URL and that this pitcrew node can reach the server`,
    });
    const wrongToken = await connect({ name: 'wrong token', url: servers.https.url('ops'), ref: 'main', credential: { token: 'ghp_wrongwrongwrong0123456789' } });
    expect(await failure({ repositoryId: wrongToken.id, path: 'runbooks/disk.sh' })).toMatchObject({ problem: 'refused', message: expect.stringMatching(/refused pitcrew: the server asked for a credential and did not accept the one given \(HTTP 401\)/) });
    const noToken = await connect({ name: 'no token', url: servers.https.url('ops'), ref: 'main' });
    expect(await failure({ repositoryId: noToken.id, path: 'runbooks/disk.sh' })).toMatchObject({ problem: 'refused' });
    const missing = await connect({ name: 'no such repo', url: servers.https.url('nothing-here'), ref: 'main', credential: { token: servers.token } });
    expect(await failure({ repositoryId: missing.id, path: 'x.sh' })).toMatchObject({ problem: 'refused', message: expect.stringMatching(/the server has no repository there/) });

    const ssh = { url: servers.ssh.url('ops'), ref: 'main', credential: { sshPrivateKey: servers.deployKey.privateKey } };
    const alias = `[127.0.0.1]:${servers.ssh.port}`;
    const changed = await connect({ ...ssh, name: 'changed key', knownHosts: `${alias} ${makeSshKey().publicKey.split(' ').slice(0, 2).join(' ')}` });
    expect(await failure({ repositoryId: changed.id, path: 'runbooks/disk.sh' })).toMatchObject({ problem: 'host_key', message: expect.stringMatching(/showed a host key that does not match the repository's knownHosts\. The server's key changed, or something is in between/) });
    // A key of another type: OpenSSH 9 calls it a changed key; the message names the type the server offered and how to get it.
    const otherType = await connect({ ...ssh, name: 'other key type', knownHosts: `${alias} ${makeSshKey('ecdsa').publicKey.split(' ').slice(0, 2).join(' ')}` });
    const offered = await failure({ repositoryId: otherType.id, path: 'runbooks/disk.sh' });
    expect(offered).toMatchObject({ problem: 'host_key', message: expect.stringContaining(`the SSH server at 127.0.0.1:${servers.ssh.port} offered its ED25519 host key (SHA256:`) });
    expect(offered.message).toContain("and the repository's knownHosts has no ED25519 key for it, only an ECDSA one");
    expect(offered.message).toContain(`add the line \`ssh-keyscan -t ed25519 -p ${servers.ssh.port} 127.0.0.1\` prints to knownHosts`);
    // A certificate authority's line alone leaves the server's own key unknown.
    const unknown = await connect({ ...ssh, name: 'unknown key', knownHosts: `@cert-authority ${alias} ${makeSshKey().publicKey.split(' ').slice(0, 2).join(' ')}` });
    expect(await failure({ repositoryId: unknown.id, path: 'runbooks/disk.sh' })).toMatchObject({ problem: 'host_key', message: expect.stringMatching(new RegExp(`knownHosts does not hold\\. Add the server's key \\(ssh-keyscan -p ${servers.ssh.port} 127\\.0\\.0\\.1`)) });
    const otherKey = await connect({ ...ssh, name: 'other key', credential: { sshPrivateKey: makeSshKey().privateKey }, knownHosts: servers.ssh.knownHosts });
    expect(await failure({ repositoryId: otherKey.id, path: 'runbooks/disk.sh' })).toMatchObject({ problem: 'refused', message: expect.stringMatching(/did not accept the deploy key; add its public key to the repository's deploy keys/) });
    const sshClosed = await connect({ ...ssh, name: 'ssh closed', url: `ssh://git@127.0.0.1:${closedPort}/ops.git`, knownHosts: `[127.0.0.1]:${closedPort} ${servers.ssh.knownHosts.split(' ').slice(1).join(' ')}` });
    expect(await failure({ repositoryId: sshClosed.id, path: 'x.sh' })).toMatchObject({ problem: 'unreachable', message: expect.stringMatching(/nothing answered at 127\.0\.0\.1:\d+ \(connection refused\)/) });
  });

  it('connects only where the egress policy permits, to the address it checked', async () => {
    const closed = await startTestEnv(dialect, { egressAllowNetworks: [], git: { caPem: servers.https.caPem } });
    try {
      for (const url of [servers.https.url('ops'), `https://localhost:${new URL(servers.https.url('ops')).port}/ops.git`]) {
        const made = await closed.api('POST', '/api/v1/repositories', { name: url, url, ref: 'main', credential: { token: servers.token } });
        const error = await closed.app.context.gitSources.read(closed.tenant.tenantId, { repositoryId: made.json().id, path: 'runbooks/disk.sh' }).catch((e: unknown) => e);
        expect(error).toMatchObject({ problem: 'unreachable', message: expect.stringMatching(/(is a private, loopback or link-local address|resolves only to private, loopback or link-local addresses).*PITCREW_EGRESS_ALLOW_NETWORKS/) });
      }
    } finally {
      await closed.close();
    }
    // A name is resolved once and git is pinned to the address checked (curl's resolve list): localhost serves the certificate's SAN.
    const named = await connect({ name: 'by name', url: `https://localhost:${new URL(servers.https.url('ops')).port}/ops.git`, ref: 'main', credential: { token: servers.token } });
    expect((await read({ repositoryId: named.id, path: 'runbooks/disk.sh' })).script).toBe(DISK);
  });

  it('pins git to the address the egress check resolved: a name only pitcrew’s lookup knows reaches both servers', async () => {
    // DNS knows nothing of PINNED_HOST: only this lookup does. git could only reach the servers through the pinned address.
    const lookup: EgressGate['lookup'] = (hostname, _options, callback) => {
      if (hostname === PINNED_HOST) callback(null, [{ address: '127.0.0.1', family: 4 }]);
      else callback(Object.assign(new Error(`${hostname} not found`), { code: 'ENOTFOUND' }), []);
    };
    const sources = new GitSources({ db: env.store.db, box: env.app.context.secretBox, egress: { refusesHost: () => undefined, lookup }, settings: { ...GIT_DEFAULTS, caPem: servers.https.caPem, cacheDir: path.join(env.database.dataDir, 'pinned') } });
    const httpsPort = new URL(servers.https.url('ops')).port;
    const named = await connect({ name: 'pinned https', url: `https://${PINNED_HOST}:${httpsPort}/ops.git`, ref: 'main', credential: { token: servers.token } });
    expect((await sources.read(env.tenant.tenantId, { repositoryId: named.id, path: 'runbooks/disk.sh' })).script).toBe(DISK);
    const knownHosts = servers.ssh.knownHosts.replace('[127.0.0.1]', `[${PINNED_HOST}]`);
    const overSsh = await connect({ name: 'pinned ssh', url: servers.ssh.url('ops').replace('127.0.0.1', PINNED_HOST), ref: 'main', credential: { sshPrivateKey: servers.deployKey.privateKey }, knownHosts });
    expect((await sources.read(env.tenant.tenantId, { repositoryId: overSsh.id, path: 'runbooks/restart.sh' })).script).toBe(RESTART);
    // The service's own lookup is the system's: the name is not found.
    expect(await failure({ repositoryId: named.id, path: 'runbooks/disk.sh' })).toMatchObject({ problem: 'unreachable', message: expect.stringMatching(new RegExp(`the host ${PINNED_HOST.replaceAll('.', '\\.')} was not found \\(DNS`)) });
  });

  it('gives up on a server that does not answer after PITCREW_GIT_TIMEOUT_SECONDS, killing git, whose command line never held the token', async () => {
    const sockets: net.Socket[] = [];
    const silent = net.createServer((socket) => sockets.push(socket));
    await new Promise<void>((resolve) => silent.listen(0, '127.0.0.1', resolve));
    const port = (silent.address() as net.AddressInfo).port;
    const quick = await startTestEnv(dialect, { git: { timeoutSeconds: 2 } });
    try {
      const made = await quick.api('POST', '/api/v1/repositories', { name: 'silent', url: `https://127.0.0.1:${port}/ops.git`, ref: 'main', credential: { token: servers.token } });
      const started = Date.now();
      const reading = quick.app.context.gitSources.read(quick.tenant.tenantId, { repositoryId: made.json().id, path: 'x.sh' }).catch((e: unknown) => e);
      await waitFor(() => sockets.length > 0, 'git to connect to the silent server');
      // While git waits: its command lines (any local user can read them) name the server, never the token; the token is in its environment.
      const running = processesNaming(`127.0.0.1:${port}`);
      expect(running.length).toBeGreaterThan(0);
      for (const { cmdline } of running) expect(cmdline).not.toContain(servers.token);
      expect(running.some(({ environ }) => environ.includes(`Authorization: Basic ${Buffer.from(`x-access-token:${servers.token}`).toString('base64')}`))).toBe(true);
      expect(await reading).toMatchObject({ problem: 'unreachable', message: expect.stringMatching(/could not be reached: no answer within 2 s \(PITCREW_GIT_TIMEOUT_SECONDS\)/) });
      expect(Date.now() - started).toBeLessThan(10_000);
      // The whole process group is gone: git and its remote helper.
      expect(processesNaming(`127.0.0.1:${port}`)).toEqual([]);
    } finally {
      await quick.close();
      for (const socket of sockets) socket.destroy();
      silent.close();
    }
  });

  it('reads a server that speaks only protocol v0, fetching the ref by name', async () => {
    const old = await startHttpsGitServer({ root: servers.root, token: servers.token, protocolV2: false });
    const legacy = await startTestEnv(dialect, { git: { caPem: old.caPem } });
    try {
      const made = await legacy.api('POST', '/api/v1/repositories', { name: 'legacy', url: old.url('ops'), ref: 'main', credential: { token: servers.token } });
      expect(await legacy.app.context.gitSources.read(legacy.tenant.tenantId, { repositoryId: made.json().id, path: 'runbooks/disk.sh', ref: 'v1.0' })).toMatchObject({ commit: first, script: DISK });
    } finally {
      await legacy.close();
      await old.close();
    }
  });

  it('says so when git is not installed, and reads nothing', async () => {
    const sources = new GitSources({ db: env.store.db, box: env.app.context.secretBox, egress: { refusesHost: () => undefined, lookup: () => undefined }, settings: { ...GIT_DEFAULTS, path: '/nonexistent' } });
    const error = await sources.read(env.tenant.tenantId, { repositoryId: httpsId, path: 'runbooks/disk.sh' }).catch((e: unknown) => e);
    expect(error).toMatchObject({ problem: 'git_missing', message: expect.stringMatching(/git is not installed \(or not on its PATH\); install git 2\.39 or later/) });
  });

  it('never shows the token or the deploy key in an error, a reply or a log line', () => {
    expect(messages.length).toBeGreaterThan(20);
    const keyLines = servers.deployKey.privateKey.split('\n').filter((line) => line.length > 20 && !line.startsWith('-----'));
    const secrets = [servers.token, Buffer.from(`x-access-token:${servers.token}`).toString('base64'), ...keyLines];
    for (const text of [...messages, ...env.logs]) for (const secret of secrets) expect(text).not.toContain(secret);
  });
});
