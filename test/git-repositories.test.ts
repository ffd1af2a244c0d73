import { createHmac, randomBytes } from 'node:crypto';
import fs from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { runRepositories } from '../src/cli/repositories.js';
import { GIT_DEFAULTS } from '../src/config/config.js';
import { EgressPolicy } from '../src/egress/policy.js';
import { deleteRepository } from '../src/runbooks/git/repository.js';
import { GitSources } from '../src/runbooks/git/sources.js';
import { startTestEnv, type TestEnv } from './support/app.js';
import { testDialects } from './support/databases.js';
import { makeSshKey, startGitServers, type GitServers, type TestRepository } from './support/git-server.js';
import { expectProblem } from './support/problems.js';

/*
 * Issue 20, the repositories API (DESIGN.md §7 POST /api/v1/repositories, docs/runbooks.md#git-repositories):
 * a repository is connected with a URL git may read (https or ssh only), a ref, a write-only
 * credential that fits the URL and, for SSH, the server's host keys; "test connection" asks the
 * server where the ref is; the files list is what a person picks a path from. Each tenant sees only
 * its own repositories, and no reply ever holds the token or the key.
 */
/** A known_hosts host field hashed as ssh-keygen -H does it: |1|salt|HMAC-SHA1(salt, host). */
const hashedHost = (host: string) => {
  const salt = randomBytes(20);
  return `|1|${salt.toString('base64')}|${createHmac('sha1', salt).update(host).digest('base64')}`;
};
const ISO = expect.stringMatching(/^\d{4}-\d\d-\d\dT/);
const UUID = expect.stringMatching(/^[0-9a-f-]{36}$/);

describe.each(testDialects())('the repositories API on %s', (dialect) => {
  let servers: GitServers;
  let env: TestEnv;
  let ops: TestRepository;
  let head: string;
  const replies: string[] = [];

  beforeAll(async () => {
    servers = await startGitServers();
    ops = servers.repository('ops');
    head = ops.commit({ 'runbooks/disk.sh': 'df -h\n', 'runbooks/restart.sh': 'systemctl restart nginx\n', 'README.md': '# ops\n', 'link.sh': { symlink: 'runbooks/disk.sh' }, 'vendor/lib': { gitlink: 'c0ffee'.padEnd(40, '0') } });
    ops.tag('v2');
    env = await startTestEnv(dialect, { git: { caPem: servers.https.caPem }, listen: true });
  });
  afterAll(async () => {
    await env.close();
    await servers.close();
  });

  const api = async (method: 'GET' | 'POST' | 'PATCH' | 'DELETE', url: string, body?: unknown, token?: string) => {
    const response = await env.api(method, url, body, token);
    replies.push(response.body);
    return response;
  };
  const https = (overrides: Record<string, unknown> = {}) => ({ name: `https-${Math.random().toString(36).slice(2, 8)}`, url: servers.https.url('ops'), ref: 'main', credential: { token: servers.token }, ...overrides });
  const ssh = (overrides: Record<string, unknown> = {}) => ({
    name: `ssh-${Math.random().toString(36).slice(2, 8)}`, url: servers.ssh.url('ops'), ref: 'main', credential: { sshPrivateKey: servers.deployKey.privateKey }, knownHosts: servers.ssh.knownHosts, ...overrides,
  });
  const create = (body: Record<string, unknown>, token?: string) => api('POST', '/api/v1/repositories', body, token);

  it('connects an HTTPS repository with a token and an SSH one with a deploy key, and shows neither secret', async () => {
    const made = await create(https({ name: ' ops over https ' }));
    expect(made.statusCode, made.body).toBe(201);
    expect(made.headers.location).toBe(`/api/v1/repositories/${made.json().id}`);
    expect(made.json()).toEqual({ id: UUID, name: 'ops over https', url: servers.https.url('ops'), ref: 'main', auth: 'token', knownHosts: null, createdAt: ISO, updatedAt: ISO, lastTest: null });
    const overSsh = await create(ssh({ name: 'ops over ssh' }));
    expect(overSsh.json()).toMatchObject({ url: servers.ssh.url('ops'), auth: 'ssh_key', knownHosts: servers.ssh.knownHosts });
    const open = await create({ name: 'public', url: 'https://git.example.com/ops/runbooks.git', ref: 'v1.2.0' });
    expect(open.json()).toMatchObject({ auth: 'none', ref: 'v1.2.0' });

    expect((await api('GET', `/api/v1/repositories/${made.json().id}`)).json()).toEqual(made.json());
    const listed = (await api('GET', '/api/v1/repositories?limit=2')).json();
    expect(listed.items.map((r: { name: string }) => r.name)).toEqual(['ops over https', 'ops over ssh']);
    expect((await api('GET', `/api/v1/repositories?cursor=${listed.nextCursor}`)).json().items.map((r: { name: string }) => r.name)).toEqual(['public']);

    // At rest: sealed, bound to the row.
    const rows = await env.store.db.selectFrom('repositories').selectAll().execute();
    expect(rows.find((r) => r.name === 'ops over https')!.credential).toMatch(/^v1:[0-9a-f]{8}:/);
    expect(rows.find((r) => r.name === 'public')!.credential).toBeNull();
    const stored = JSON.stringify(rows);
    expect(stored).not.toContain(servers.token);
    expect(stored).not.toContain(servers.deployKey.privateKey.split('\n')[1]);
    expectProblem(await create(https({ name: 'ops over https' })), 409, 'PITCREW_ERR_CONFLICT');
  });

  it.each([
    ['http://', { url: 'http://git.example.com/ops.git' }, '/body/url', /in the clear; use https:\/\//],
    ['file://', { url: 'file:///srv/git/ops.git' }, '/body/url', /uses file:\/\//],
    ['git://', { url: 'git://git.example.com/ops.git' }, '/body/url', /uses git:\/\//],
    ['ext::', { url: 'ext::sh -c touch% /tmp/pwned' }, '/body/url', /blanks|remote helper/],
    ['ext:: without blanks', { url: 'ext::/bin/true' }, '/body/url', /names a git remote helper/],
    ['a local path', { url: '/srv/git/ops.git' }, '/body/url', /a local path/],
    ['a relative path', { url: '../ops.git' }, '/body/url', /a local path/],
    ['an option', { url: '--upload-pack=touch /tmp/x' }, '/body/url', /blanks|starts with "-"/],
    ['an option without blanks', { url: '-oProxyCommand=id' }, '/body/url', /starts with "-"/],
    ['a token in the URL', { url: 'https://x-access-token:ghp_secret@git.example.com/ops.git' }, '/body/url', /holds a user name or token; remove it from the URL and give it as credential/],
    ['an SSH password', { url: 'ssh://git:hunter2@git.example.com/ops.git' }, '/body/url', /password/],
    ['a query', { url: 'https://git.example.com/ops.git?x=1' }, '/body/url', /query or fragment/],
    ['an SSH host starting with -', { url: 'ssh://-oProxyCommand=id/ops.git' }, '/body/url', /not a host name/],
    ['an SSH path starting with -', { url: 'git@git.example.com:-x.git', credential: undefined, knownHosts: 'git.example.com ssh-ed25519 AAAAC3NzaC1lZDI1NTE5AAAAIE5UEje1fxLGz0HilQe2Iqgjdctrbnml+NX/xbgV+N3e' }, '/body/url', /starting with "-"/],
    ['a ref starting with -', { ref: '--upload-pack=touch' }, '/body/ref', /starts with "-"/],
    ['a ref with ..', { ref: 'release..9' }, '/body/ref', /"\.\."/],
    ['a ref ending .lock', { ref: 'main.lock' }, '/body/ref', /\.lock/],
    ['a ref with a blank', { ref: 'release 9' }, '/body/ref', /blank/],
    ['a ref under refs/remotes', { ref: 'refs/remotes/origin/main' }, '/body/ref', /outside refs\/heads\/ and refs\/tags\//],
    ['a key for HTTPS', { credential: { sshPrivateKey: 'k' } }, '/body/credential/sshPrivateKey', /is for SSH repositories; an HTTPS URL takes \{token, username\?\}/],
    ['a token with a line break', { credential: { token: 'ghp_abc\r\nX-Evil: 1' } }, '/body/credential/token', /line breaks/],
    ['a user name with :', { credential: { token: 'ghp_abcdef', username: 'a:b' } }, '/body/credential/username', /":"/],
    ['both a token and a key', { credential: { token: 'ghp_abcdef', sshPrivateKey: 'k' } }, '/body/credential/sshPrivateKey', /not both/],
    ['an empty credential', { credential: {} }, '/body/credential', /is empty/],
    ['host keys for HTTPS', { knownHosts: 'git.example.com ssh-ed25519 AAAA' }, '/body/knownHosts', /is for SSH URLs/],
    ['an unknown field', { branch: 'main' }, '/body/branch', /is not a known field/],
  ])('refuses %s over HTTPS at its field', async (_, overrides, field, message) => {
    const body = Object.fromEntries(Object.entries(https(overrides)).filter(([, value]) => value !== undefined));
    const problem = expectProblem(await create(body), 400, 'PITCREW_ERR_VALIDATION');
    expect(problem.errors).toContainEqual({ path: field, message: expect.stringMatching(message) });
  });

  it.each([
    ['a token for SSH', { credential: { token: 'ghp_abcdef' } }, '/body/credential/token', /is for HTTPS repositories; an SSH URL takes \{sshPrivateKey\}/],
    ['no host keys', { knownHosts: undefined }, '/body/knownHosts', /is required for an SSH URL.*ssh-keyscan -p \d+ 127\.0\.0\.1/],
    ['host keys of another port', { knownHosts: () => servers.ssh.knownHosts.replace(/^\[127\.0\.0\.1\]:\d+/, '127.0.0.1') }, '/body/knownHosts', /has no line for \[127\.0\.0\.1\]:\d+, the host \(and port\) of the repository's URL; get its keys with ssh-keyscan -p \d+ 127\.0\.0\.1/],
    ['a public key as host keys', { knownHosts: () => makeSshKey().publicKey }, '/body/knownHosts', /line 1 starts with the key type, without the host/],
    ['a damaged host key', { knownHosts: () => servers.ssh.knownHosts.replace(/AAAA\S+/, 'AAAAnotakey') }, '/body/knownHosts', /not the base64 of a ssh-ed25519 key/],
    ['a key with a passphrase', { credential: () => ({ sshPrivateKey: makeSshKey('ed25519', 'secret words').privateKey }) }, '/body/credential/sshPrivateKey', /protected by a passphrase/],
    ['a public key as the key', { credential: () => ({ sshPrivateKey: makeSshKey().publicKey }) }, '/body/credential/sshPrivateKey', /is a public key; give the private key/],
    ['a truncated key', { credential: { sshPrivateKey: '-----BEGIN OPENSSH PRIVATE KEY-----\nb3BlbnNzaC1rZXktdjEAAAAABG5vbmUAAAAEbm9uZQ' } }, '/body/credential/sshPrivateKey', /paste the whole file/],
    ['a user name with a key', { credential: () => ({ sshPrivateKey: servers.deployKey.privateKey, username: 'git' }) }, '/body/credential/username', /goes with a token/],
  ])('refuses %s over SSH at its field', async (_, overrides, field, message) => {
    const resolved = Object.fromEntries(Object.entries(overrides).map(([key, value]) => [key, typeof value === 'function' ? value() : value]));
    const body = Object.fromEntries(Object.entries(ssh(resolved)).filter(([, value]) => value !== undefined));
    const problem = expectProblem(await create(body), 400, 'PITCREW_ERR_VALIDATION');
    expect(problem.errors).toContainEqual({ path: field, message: expect.stringMatching(message) });
  });

  it('takes every URL form git reads over https and ssh, and keeps what it was given', async () => {
    const key = { sshPrivateKey: servers.deployKey.privateKey };
    for (const [url, knownHosts] of [
      ['https://git.example.com:8443/ops/runbooks.git', undefined],
      ['https://[2001:db8::5]/ops.git', undefined],
      ['ssh://git@git.example.com/ops/runbooks.git', 'git.example.com ssh-ed25519 AAAAC3NzaC1lZDI1NTE5AAAAIE5UEje1fxLGz0HilQe2Iqgjdctrbnml+NX/xbgV+N3e'],
      // A hashed line, as ssh-keyscan -H writes it.
      ['git@git.example.com:ops/runbooks.git', `${hashedHost('git.example.com')} ssh-ed25519 AAAAC3NzaC1lZDI1NTE5AAAAIE5UEje1fxLGz0HilQe2Iqgjdctrbnml+NX/xbgV+N3e`],
      ['ssh://git@[2001:db8::5]:2222/ops.git', '[2001:db8::5]:2222 ssh-ed25519 AAAAC3NzaC1lZDI1NTE5AAAAIE5UEje1fxLGz0HilQe2Iqgjdctrbnml+NX/xbgV+N3e'],
    ] as const) {
      const made = await create({ name: url, url, ref: 'main', ...(knownHosts ? { knownHosts, credential: key } : {}) });
      expect(made.statusCode, `${url}: ${made.body}`).toBe(201);
      expect(made.json().url).toBe(url);
    }
  });

  it('tests a connection by asking where the ref is, keeps the result, and says what to change when it fails', async () => {
    const made = (await create(https({ name: 'tested' }))).json();
    const fetchesBefore = servers.https.count('ops', 'fetch');
    const tested = await api('POST', `/api/v1/repositories/${made.id}/test`);
    expect(tested.statusCode, tested.body).toBe(200);
    expect(tested.json()).toEqual({ ok: true, ref: 'main', commit: head, message: `repository "tested" (${servers.https.url('ops')}) answered: main is at commit ${head} (refs/heads/main)` });
    // Nothing but the ref was read.
    expect(servers.https.count('ops', 'fetch')).toBe(fetchesBefore);
    expect((await api('GET', `/api/v1/repositories/${made.id}`)).json().lastTest).toEqual({ at: ISO, ok: true, message: tested.json().message, commit: head });

    // A change of where it reads clears the last test; a rename keeps it.
    expect((await api('PATCH', `/api/v1/repositories/${made.id}`, { name: 'tested, renamed' })).json().lastTest).toMatchObject({ ok: true });
    const moved = await api('PATCH', `/api/v1/repositories/${made.id}`, { ref: 'release-9' });
    expect(moved.json()).toMatchObject({ ref: 'release-9', lastTest: null });
    const missing = (await api('POST', `/api/v1/repositories/${made.id}/test`)).json();
    expect(missing).toEqual({ ok: false, ref: 'release-9', message: `ref release-9 does not exist in repository "tested, renamed" (${servers.https.url('ops')}): push it or change the rule's ref` });
    expect((await api('GET', `/api/v1/repositories/${made.id}`)).json().lastTest).toEqual({ at: ISO, ok: false, message: missing.message });

    const wrong = (await create(https({ name: 'wrong token', credential: { token: 'ghp_not-the-right-one-000' } }))).json();
    expect((await api('POST', `/api/v1/repositories/${wrong.id}/test`)).json()).toMatchObject({ ok: false, message: expect.stringMatching(/refused pitcrew: .*HTTP 401/) });
    const overSsh = (await create(ssh({ name: 'ssh tested' }))).json();
    expect((await api('POST', `/api/v1/repositories/${overSsh.id}/test`)).json()).toMatchObject({ ok: true, commit: head });
  });

  it('lists the regular files at a ref for a person to pick a path from', async () => {
    const made = (await create(https({ name: 'browsed' }))).json();
    const files = await api('GET', `/api/v1/repositories/${made.id}/files`);
    expect(files.json()).toEqual({ ok: true, ref: 'main', commit: head, files: ['README.md', 'runbooks/disk.sh', 'runbooks/restart.sh'], truncated: false, message: `3 files at main (commit ${head.slice(0, 12)})` });
    expect((await api('GET', `/api/v1/repositories/${made.id}/files?ref=v2`)).json()).toMatchObject({ ok: true, ref: 'v2', commit: head });
    expect((await api('GET', `/api/v1/repositories/${made.id}/files?ref=nope`)).json()).toMatchObject({ ok: false, ref: 'nope', files: [], message: expect.stringMatching(/^ref nope does not exist/) });
    expect(expectProblem(await api('GET', `/api/v1/repositories/${made.id}/files?ref=-x`), 400, 'PITCREW_ERR_VALIDATION').errors).toEqual([{ path: '/query/ref', message: expect.stringMatching(/starts with "-"/) }]);

    const many = servers.repository('many');
    many.commit(Object.fromEntries(Array.from({ length: 1001 }, (_, i) => [`runbooks/r${String(i).padStart(4, '0')}.sh`, `echo ${i}\n`])));
    const big = (await create(https({ name: 'many', url: servers.https.url('many') }))).json();
    const listed = (await api('GET', `/api/v1/repositories/${big.id}/files`)).json();
    expect(listed).toMatchObject({ ok: true, truncated: true, message: expect.stringMatching(/^the first 1000 files at main/) });
    expect(listed.files).toHaveLength(1000);
  });

  it('changes a repository whole: a new URL must fit the credential, SSH needs host keys, HTTPS drops them', async () => {
    const made = (await create(https({ name: 'moving' }))).json();
    const toSsh = expectProblem(await api('PATCH', `/api/v1/repositories/${made.id}`, { url: servers.ssh.url('ops') }), 400, 'PITCREW_ERR_VALIDATION');
    expect(toSsh.errors).toEqual([
      { path: '/body/credential', message: "the repository's credential is a token, which an SSH URL does not take: send {sshPrivateKey} (or null) with the new URL" },
      { path: '/body/knownHosts', message: expect.stringMatching(/is required for an SSH URL/) },
    ]);
    const moved = await api('PATCH', `/api/v1/repositories/${made.id}`, { url: servers.ssh.url('ops'), credential: { sshPrivateKey: servers.deployKey.privateKey }, knownHosts: servers.ssh.knownHosts });
    expect(moved.json()).toMatchObject({ url: servers.ssh.url('ops'), auth: 'ssh_key', knownHosts: servers.ssh.knownHosts });
    expect((await api('POST', `/api/v1/repositories/${made.id}/test`)).json()).toMatchObject({ ok: true });
    expect(expectProblem(await api('PATCH', `/api/v1/repositories/${made.id}`, { url: servers.https.url('ops') }), 400, 'PITCREW_ERR_VALIDATION').errors)
      .toEqual([{ path: '/body/credential', message: expect.stringMatching(/is an SSH key, which an HTTPS URL does not take/) }]);
    const back = await api('PATCH', `/api/v1/repositories/${made.id}`, { url: servers.https.url('ops'), credential: { token: servers.token } });
    expect(back.json()).toMatchObject({ auth: 'token', knownHosts: null });
    expect((await api('PATCH', `/api/v1/repositories/${made.id}`, { credential: null })).json()).toMatchObject({ auth: 'none' });
    expect((await api('POST', `/api/v1/repositories/${made.id}/test`)).json()).toMatchObject({ ok: false, message: expect.stringMatching(/HTTP 401/) });
    expectProblem(await api('PATCH', `/api/v1/repositories/${made.id}`, {}), 400, 'PITCREW_ERR_VALIDATION');
  });

  it('deletes a repository and its cache, and keeps one a rule reads from', async () => {
    const made = (await create(https({ name: 'doomed' }))).json();
    await env.app.context.gitSources.read(env.tenant.tenantId, { repositoryId: made.id, path: 'runbooks/disk.sh' });
    const cache = path.join(env.database.dataDir, 'git', `${made.id}.git`);
    expect(fs.existsSync(cache)).toBe(true);
    const rule = async () => [{ id: '01900000-0000-7000-8000-000000000001', name: 'disk full' }];
    await expect(deleteRepository(env.store.db, env.tenant.tenantId, made.id, rule)).rejects.toMatchObject({
      code: 'PITCREW_ERR_CONFLICT', message: 'repository "doomed" is read by rule "disk full"; point it at another runbook, or delete it, first',
    });
    expect((await api('DELETE', `/api/v1/repositories/${made.id}`)).statusCode).toBe(204);
    expect(fs.existsSync(cache)).toBe(false);
    expectProblem(await api('GET', `/api/v1/repositories/${made.id}`), 404, 'PITCREW_ERR_NOT_FOUND');

    // After a restart, before any read: the cache a previous process left is still found and dropped.
    const again = (await create(https({ name: 'doomed again' }))).json();
    await env.app.context.gitSources.read(env.tenant.tenantId, { repositoryId: again.id, path: 'runbooks/disk.sh' });
    const restarted = new GitSources({ db: env.store.db, box: env.app.context.secretBox, egress: new EgressPolicy([]), settings: { ...GIT_DEFAULTS, cacheDir: path.join(env.database.dataDir, 'git') } });
    await restarted.forget(again.id);
    expect(fs.existsSync(path.join(env.database.dataDir, 'git', `${again.id}.git`))).toBe(false);
  });

  it('keeps each tenant to its own repositories', async () => {
    const mine = (await create(https({ name: 'mine' }))).json();
    const other = await env.addTenant(`repositories-other-${dialect}`);
    const theirs = await create(https({ name: 'mine' }), other.token);
    expect(theirs.statusCode).toBe(201);
    expect((await api('GET', '/api/v1/repositories?limit=1000', undefined, other.token)).json().items.map((r: { id: string }) => r.id)).toEqual([theirs.json().id]);
    for (const [method, url, body] of [
      ['GET', `/api/v1/repositories/${mine.id}`, undefined],
      ['PATCH', `/api/v1/repositories/${mine.id}`, { name: 'taken over' }],
      ['POST', `/api/v1/repositories/${mine.id}/test`, undefined],
      ['GET', `/api/v1/repositories/${mine.id}/files`, undefined],
      ['DELETE', `/api/v1/repositories/${mine.id}`, undefined],
    ] as const) {
      expectProblem(await api(method, url, body, other.token), 404, 'PITCREW_ERR_NOT_FOUND');
    }
    expect((await api('GET', `/api/v1/repositories/${mine.id}`)).json().name).toBe('mine');
  });

  describe('pitcrew repositories', () => {
    const output: string[] = [];
    let dir: string;
    beforeAll(() => {
      dir = fs.mkdtempSync(path.join(os.tmpdir(), 'pitcrew-cli-repos-'));
    });
    afterAll(() => fs.rmSync(dir, { recursive: true, force: true }));
    const cli = async (...args: string[]) => {
      output.length = 0;
      const code = await runRepositories(args, { server: env.listening!.httpUrl, token: env.tenant.token }, (line) => output.push(line));
      replies.push(output.join('\n'));
      return { code, out: output.join('\n') };
    };

    it('creates, tests, lists, shows, lists files and deletes, reading secrets from files only', async () => {
      fs.writeFileSync(path.join(dir, 'key'), servers.deployKey.privateKey);
      fs.writeFileSync(path.join(dir, 'known_hosts'), `${servers.ssh.knownHosts}\n`);
      fs.writeFileSync(path.join(dir, 'token'), `${servers.token}\n`);
      const created = await cli('create', '--name', 'cli ssh', '--url', servers.ssh.url('ops'), '--ref', 'main', '--ssh-key', `@${path.join(dir, 'key')}`, '--known-hosts', `@${path.join(dir, 'known_hosts')}`);
      expect(created.out).toMatch(/^connected repository "cli ssh" \(([0-9a-f-]{36})\) at main; try it: npx pitcrew repositories test \1$/);
      const id = /\(([0-9a-f-]{36})\)/.exec(created.out)![1]!;
      expect(await cli('test', id)).toEqual({ code: 0, out: `ok: repository "cli ssh" (${servers.ssh.url('ops')}) answered: main is at commit ${head} (refs/heads/main)` });
      expect((await cli('list')).out).toMatch(new RegExp(`\\n${id} {2,}cli ssh {2,}${servers.ssh.url('ops').replace(/[.]/g, '\\.')} {2,}main {2,}ssh_key {2,}ok `));
      expect((await cli('show', id)).out).toMatch(new RegExp(`^repository "cli ssh" \\(${id}\\)\\nurl {9}ssh://.*\\nref {9}main\\ncredential {2}an SSH key \\(sealed\\)\\nlast test {3}ok .*\\nhost keys\\n {2}\\[127\\.0\\.0\\.1\\]`));
      expect(await cli('files', id, '--ref', 'v2')).toEqual({ code: 0, out: `3 files at v2 (commit ${head.slice(0, 12)}):\nREADME.md\nrunbooks/disk.sh\nrunbooks/restart.sh` });
      expect(await cli('files', id, '--ref', 'nope')).toMatchObject({ code: 1, out: expect.stringMatching(/^failed: ref nope does not exist/) });

      const overHttps = await cli('create', '--name', 'cli https', '--url', servers.https.url('ops'), '--ref', 'main', '--repo-token', `@${path.join(dir, 'token')}`, '--json');
      expect(JSON.parse(overHttps.out)).toMatchObject({ auth: 'token', name: 'cli https' });
      await expect(cli('create', '--name', 'x', '--url', servers.https.url('ops'), '--ref', 'main', '--repo-token', servers.token)).rejects.toMatchObject({ exitCode: 2, message: expect.stringMatching(/--repo-token takes @FILE or - \(stdin\), never the value itself/) });
      await expect(cli('create', '--name', 'x', '--url', 'http://git.example.com/x.git', '--ref', 'main')).rejects.toMatchObject({ message: expect.stringMatching(/\/body\/url: is http:\/\//) });
      const failing = (await cli('create', '--name', 'cli failing', '--url', servers.https.url('ops'), '--ref', 'gone', '--repo-token', `@${path.join(dir, 'token')}`, '--json')).out;
      expect(await cli('test', JSON.parse(failing).id)).toMatchObject({ code: 1, out: expect.stringMatching(/^failed: ref gone does not exist/) });
      expect((await cli('delete', id)).out).toBe(`deleted repository ${id}: its sealed credential and its cache are gone`);
    });
  });

  it('never shows the token or the deploy key in a reply, the CLI’s output or a log line', () => {
    const keyLines = servers.deployKey.privateKey.split('\n').filter((line) => line.length > 20 && !line.startsWith('-----'));
    for (const text of [...replies, ...env.logs]) {
      expect(text).not.toContain(servers.token);
      for (const line of keyLines) expect(text).not.toContain(line);
    }
  });
});
