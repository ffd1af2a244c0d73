import { execFileSync, spawn, type ChildProcess } from 'node:child_process';
import fs from 'node:fs';
import https from 'node:https';
import type { IncomingMessage, ServerResponse } from 'node:http';
import net, { type AddressInfo } from 'node:net';
import os from 'node:os';
import path from 'node:path';
import { gunzipSync } from 'node:zlib';
import selfsigned from 'selfsigned';

/*
 * Real git servers on loopback for the tests of runbooks read from repositories (issue 20):
 * `git http-backend` behind HTTPS with a token, and OpenSSH's sshd with a deploy key. Both serve
 * the bare repositories under one root, count what they are asked, and serve fetches only: a push
 * is refused by each.
 */

/**
 * A name no DNS server knows, in the servers' certificate: a test that reaches a server by it shows
 * that git connected to the address pitcrew resolved and checked, not to one it looked up itself.
 */
export const PINNED_HOST = 'git.pitcrew.test';

const GIT_ENV = { GIT_CONFIG_NOSYSTEM: '1', GIT_CONFIG_GLOBAL: '/dev/null', LC_ALL: 'C' };

/** A request the HTTPS server answered: `command` is the protocol v2 command (ls-refs, fetch) of a POST. */
export interface GitHttpRequest {
  method: string;
  path: string;
  service: string | undefined;
  command: string | undefined;
  authorized: boolean;
  status: number;
}

export interface HttpsGitServer {
  /** https://127.0.0.1:PORT/NAME.git */
  url(name: string): string;
  /** The server's self-signed certificate: what PITCREW_GIT_CA_FILE holds for it. */
  caPem: string;
  requests: GitHttpRequest[];
  /** The requests that ran `command` (ls-refs, fetch) on repository `name`. */
  count(name: string, command: string): number;
  close(): Promise<void>;
}

export interface HttpsGitOptions {
  root: string;
  /** The token a request must carry (HTTP Basic, any user name unless `username`); none: every request refused. */
  token: string;
  username?: string;
  /** false: the server speaks protocol v0 only, as an old server does (fetches name advertised refs only). */
  protocolV2?: boolean;
}

/**
 * `git http-backend` run as CGI behind a Node HTTPS server (git-http-backend(1)): HTTP Basic with
 * the token (401 otherwise), receive-pack refused always (403), the request body passed through
 * and the CGI headers parsed into the reply.
 */
export async function startHttpsGitServer(options: HttpsGitOptions): Promise<HttpsGitServer> {
  const pems = await selfsigned.generate([{ name: 'commonName', value: 'localhost' }], {
    keyType: 'ec', curve: 'P-256', algorithm: 'sha256',
    extensions: [{ name: 'basicConstraints', cA: true }, { name: 'subjectAltName', altNames: [{ type: 2, value: 'localhost' }, { type: 2, value: PINNED_HOST }, { type: 7, ip: '127.0.0.1' }] }],
  });
  const requests: GitHttpRequest[] = [];
  const server = https.createServer({ key: pems.private, cert: pems.cert }, (request, response) => {
    void serve(request, response, options, requests).catch((error: Error) => {
      if (!response.headersSent) response.writeHead(500).end(error.message);
      else response.destroy();
    });
  });
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  const { port } = server.address() as AddressInfo;
  return {
    url: (name) => `https://127.0.0.1:${port}/${name}.git`,
    caPem: pems.cert,
    requests,
    count: (name, command) => requests.filter((r) => r.path.startsWith(`/${name}.git/`) && r.command === command).length,
    close: () => new Promise((resolve) => {
      server.closeAllConnections();
      server.close(() => resolve());
    }),
  };
}

async function serve(request: IncomingMessage, response: ServerResponse, options: HttpsGitOptions, requests: GitHttpRequest[]): Promise<void> {
  const url = new URL(request.url ?? '/', 'https://git.test');
  const service = url.searchParams.get('service') ?? (url.pathname.endsWith('/git-upload-pack') ? 'git-upload-pack' : url.pathname.endsWith('/git-receive-pack') ? 'git-receive-pack' : undefined);
  const body = await readBody(request);
  const record: GitHttpRequest = { method: request.method ?? 'GET', path: url.pathname, service, command: v2Command(body, request.headers['content-encoding']), authorized: authorized(request, options), status: 0 };
  requests.push(record);
  if (!record.authorized) {
    record.status = 401;
    response.writeHead(401, { 'WWW-Authenticate': 'Basic realm="git"', 'Content-Type': 'text/plain' }).end('a token is needed\n');
    return;
  }
  if (service === 'git-receive-pack') {
    record.status = 403;
    response.writeHead(403, { 'Content-Type': 'text/plain' }).end('this server is read-only\n');
    return;
  }
  const cgi = spawn('/usr/lib/git-core/git-http-backend', [], {
    env: {
      ...GIT_ENV,
      PATH: process.env.PATH ?? '/usr/bin:/bin',
      GIT_PROJECT_ROOT: options.root,
      GIT_HTTP_EXPORT_ALL: '1',
      PATH_INFO: decodeURIComponent(url.pathname),
      QUERY_STRING: url.search.slice(1),
      REQUEST_METHOD: request.method ?? 'GET',
      CONTENT_TYPE: request.headers['content-type'] ?? '',
      CONTENT_LENGTH: String(body.length),
      REMOTE_USER: 'pitcrew',
      REMOTE_ADDR: request.socket.remoteAddress ?? '127.0.0.1',
      ...(request.headers['content-encoding'] ? { HTTP_CONTENT_ENCODING: String(request.headers['content-encoding']) } : {}),
      // As a web server sets it from the Git-Protocol header (git-http-backend(1)): protocol v2 when the client asks.
      ...(options.protocolV2 !== false && request.headers['git-protocol'] ? { GIT_PROTOCOL: String(request.headers['git-protocol']) } : {}),
    },
    stdio: ['pipe', 'pipe', 'pipe'],
  });
  // http-backend reads no body for a GET, and may exit before reading all of one it refuses.
  cgi.stdin.on('error', () => undefined);
  cgi.stdin.end(body);
  let stderr = '';
  cgi.stderr.on('data', (chunk) => (stderr += chunk));
  let head = Buffer.alloc(0);
  let headerDone = false;
  cgi.stdout.on('data', (chunk: Buffer) => {
    if (headerDone) {
      response.write(chunk);
      return;
    }
    head = Buffer.concat([head, chunk]);
    const end = head.indexOf('\r\n\r\n') !== -1 ? head.indexOf('\r\n\r\n') : head.indexOf('\n\n');
    if (end === -1) return;
    const separator = head.indexOf('\r\n\r\n') === end ? 4 : 2;
    const headers: Record<string, string> = {};
    let status = 200;
    for (const line of head.subarray(0, end).toString('latin1').split(/\r?\n/)) {
      const colon = line.indexOf(':');
      const name = line.slice(0, colon).trim();
      const value = line.slice(colon + 1).trim();
      if (name.toLowerCase() === 'status') status = Number(value.split(' ')[0]);
      else headers[name] = value;
    }
    record.status = status;
    headerDone = true;
    response.writeHead(status, headers);
    response.write(head.subarray(end + separator));
  });
  await new Promise<void>((resolve) => cgi.once('close', (code) => {
    if (!headerDone) {
      record.status = 500;
      response.writeHead(500, { 'Content-Type': 'text/plain' }).end(`git http-backend failed (${code}): ${stderr}`);
    } else {
      response.end();
    }
    resolve();
  }));
}

function authorized(request: IncomingMessage, options: HttpsGitOptions): boolean {
  const header = request.headers.authorization ?? '';
  if (!header.startsWith('Basic ')) return false;
  const decoded = Buffer.from(header.slice(6), 'base64').toString('utf8');
  const colon = decoded.indexOf(':');
  const [user, token] = [decoded.slice(0, colon), decoded.slice(colon + 1)];
  return token === options.token && (options.username === undefined || user === options.username);
}

function readBody(request: IncomingMessage): Promise<Buffer> {
  return new Promise((resolve, reject) => {
    const chunks: Buffer[] = [];
    request.on('data', (chunk: Buffer) => chunks.push(chunk));
    request.on('end', () => resolve(Buffer.concat(chunks)));
    request.on('error', reject);
  });
}

/** The first pkt-line of a protocol v2 request: `command=ls-refs`, `command=fetch`. */
function v2Command(body: Buffer, encoding: string | string[] | undefined): string | undefined {
  if (body.length === 0) return undefined;
  const plain = encoding === 'gzip' ? gunzipSync(body) : body;
  const length = Number.parseInt(plain.subarray(0, 4).toString('latin1'), 16);
  const line = plain.subarray(4, length).toString('latin1').trimEnd();
  return line.startsWith('command=') ? line.slice('command='.length) : undefined;
}

export interface SshGitServer {
  port: number;
  /** ssh://USER@127.0.0.1:PORT/NAME.git, USER being the account the tests run as. */
  url(name: string): string;
  /** The server's host key as a known_hosts line for [127.0.0.1]:PORT. */
  knownHosts: string;
  /** The commands the deploy key ran, one per connection: git-upload-pack '/NAME.git'. */
  commands(): string[];
  close(): Promise<void>;
}

/**
 * OpenSSH's sshd as a child on a free loopback port with its own host key and configuration. Only
 * `deployKey` logs in (as the account the tests run as), and its authorized_keys line forces a
 * wrapper that serves git-upload-pack of a repository under `root` and nothing else: no shell, no
 * push, no forwarding.
 */
export async function startSshGitServer(options: { root: string; deployKeyPublic: string }): Promise<SshGitServer> {
  const dir = fs.mkdtempSync(path.join(os.tmpdir(), 'pitcrew-sshd-'));
  const user = os.userInfo().username;
  const hostKey = path.join(dir, 'host_ed25519');
  execFileSync('ssh-keygen', ['-q', '-t', 'ed25519', '-N', '', '-C', 'git-test-host', '-f', hostKey]);
  const log = path.join(dir, 'commands.log');
  const wrapper = path.join(dir, 'git-only.sh');
  fs.writeFileSync(wrapper, [
    '#!/bin/sh',
    '# Serves git-upload-pack of a repository under the root, and nothing else; logs each command.',
    `printf '%s\\n' "$SSH_ORIGINAL_COMMAND" >> '${log}'`,
    'case "$SSH_ORIGINAL_COMMAND" in',
    `  "git-upload-pack '"*"'") repo=\${SSH_ORIGINAL_COMMAND#git-upload-pack \\'}; repo=\${repo%\\'} ;;`,
    '  *) echo "this key may only fetch (git-upload-pack)" >&2; exit 1 ;;',
    'esac',
    'case "$repo" in *..*) echo "no such repository" >&2; exit 1 ;; esac',
    `exec git-upload-pack --strict '${options.root}'/"\${repo#/}"`,
    '',
  ].join('\n'), { mode: 0o755 });
  fs.writeFileSync(path.join(dir, 'authorized_keys'), `command="${wrapper}",restrict ${options.deployKeyPublic.trim()}\n`, { mode: 0o600 });
  const config = path.join(dir, 'sshd_config');
  const settings = [
    'ListenAddress 127.0.0.1',
    `HostKey ${hostKey}`,
    `PidFile ${path.join(dir, 'sshd.pid')}`,
    `AuthorizedKeysFile ${path.join(dir, 'authorized_keys')}`,
    `AllowUsers ${user}`,
    'StrictModes no',
    'UsePAM no',
    'PasswordAuthentication no',
    'KbdInteractiveAuthentication no',
    'PubkeyAuthentication yes',
    'PermitRootLogin prohibit-password',
    'AcceptEnv GIT_PROTOCOL',
    'PermitUserEnvironment no',
    // sshd runs the forced command through the account's login shell, and Debian's bash reads
    // ~/.bashrc when sshd starts it: the account's start-up files ran in every connection (a
    // pyenv init took 4-5 s at load 12, missing the UI's 10 s wait for Test connection). A HOME
    // of the server's own has none, nor the account's git config for git-upload-pack.
    `SetEnv HOME=${dir}`,
    'LogLevel INFO',
    '',
  ];
  // The privilege separation directory sshd checks for when started as root.
  if (process.getuid?.() === 0) fs.mkdirSync('/run/sshd', { recursive: true, mode: 0o755 });
  let child: ChildProcess | undefined;
  let port = 0;
  // A free port can be taken by another process before sshd binds it: then another one.
  for (let attempt = 1; !child; attempt++) {
    port = await freeLoopbackPort();
    fs.writeFileSync(config, [`Port ${port}`, ...settings].join('\n'));
    const started = spawn('/usr/sbin/sshd', ['-D', '-e', '-f', config], { stdio: ['ignore', 'ignore', 'pipe'] });
    let output = '';
    const listening = await new Promise<boolean>((resolve, reject) => {
      started.stderr!.on('data', (chunk) => {
        output += chunk;
        if (output.includes('Server listening on')) resolve(true);
      });
      started.once('exit', (code) => (attempt < 3 && output.includes('Address already in use') ? resolve(false) : reject(new Error(`sshd exited with ${code} before listening:\n${output}`))));
    });
    if (listening) child = started;
  }
  const sshd = child;
  const publicKey = fs.readFileSync(`${hostKey}.pub`, 'utf8').trim().split(' ').slice(0, 2).join(' ');
  return {
    port,
    url: (name) => `ssh://${user}@127.0.0.1:${port}/${name}.git`,
    knownHosts: `[127.0.0.1]:${port} ${publicKey}`,
    commands: () => (fs.existsSync(log) ? fs.readFileSync(log, 'utf8').split('\n').filter(Boolean) : []),
    close: async () => {
      if (sshd.exitCode === null) {
        const exited = new Promise((resolve) => sshd.once('exit', resolve));
        sshd.kill('SIGTERM');
        await exited;
      }
      fs.rmSync(dir, { recursive: true, force: true });
    },
  };
}

function freeLoopbackPort(): Promise<number> {
  return new Promise((resolve, reject) => {
    const server = net.createServer();
    server.once('error', reject);
    server.listen(0, '127.0.0.1', () => {
      const { port } = server.address() as AddressInfo;
      server.close(() => resolve(port));
    });
  });
}

/** An SSH key pair made with ssh-keygen: the private key as a file holds it, the public line for authorized_keys. */
export function makeSshKey(type: 'ed25519' | 'ecdsa' = 'ed25519', passphrase = ''): { privateKey: string; publicKey: string } {
  const dir = fs.mkdtempSync(path.join(os.tmpdir(), 'pitcrew-key-'));
  try {
    execFileSync('ssh-keygen', ['-q', '-t', type, '-N', passphrase, '-C', 'pitcrew-deploy-key', '-f', path.join(dir, 'key')]);
    return { privateKey: fs.readFileSync(path.join(dir, 'key'), 'utf8'), publicKey: fs.readFileSync(path.join(dir, 'key.pub'), 'utf8').trim() };
  } finally {
    fs.rmSync(dir, { recursive: true, force: true });
  }
}

/** A file to commit: text or bytes, a symbolic link to `symlink`, or a submodule at commit `gitlink`. */
export type FileContent = string | Buffer | { symlink: string } | { gitlink: string };

/**
 * A bare repository under a server's root (NAME.git) and a work tree that commits to it: what a
 * team's pushes would put there.
 */
export class TestRepository {
  readonly bare: string;
  private readonly work: string;

  constructor(root: string, readonly name: string) {
    this.bare = path.join(root, `${name}.git`);
    this.work = fs.mkdtempSync(path.join(os.tmpdir(), `pitcrew-work-${name}-`));
    execFileSync('git', ['init', '--quiet', '--bare', '--initial-branch=main', this.bare], { env: { ...process.env, ...GIT_ENV } });
    this.git('init', '--quiet', '--initial-branch=main');
  }

  /** Writes the files (and removes those given as null), commits them and pushes main; the commit's id. */
  commit(files: Record<string, FileContent | null>, message = 'change runbooks'): string {
    const gitlinks: string[] = [];
    for (const [file, content] of Object.entries(files)) {
      const target = path.join(this.work, file);
      fs.rmSync(target, { recursive: true, force: true });
      if (content === null) continue;
      fs.mkdirSync(path.dirname(target), { recursive: true });
      if (Buffer.isBuffer(content) || typeof content === 'string') fs.writeFileSync(target, content);
      else if ('symlink' in content) fs.symlinkSync(content.symlink, target);
      else gitlinks.push(`160000,${content.gitlink},${file}`);
    }
    this.git('add', '--all');
    // A submodule's entry (mode 160000), as `git submodule add` leaves it, without fetching anything.
    for (const gitlink of gitlinks) this.git('update-index', '--add', '--cacheinfo', gitlink);
    this.git('commit', '--quiet', '--allow-empty', '-m', message);
    this.git('push', '--quiet', this.bare, 'HEAD:refs/heads/main');
    return this.git('rev-parse', 'HEAD');
  }

  /** Tags the latest commit (annotated unless `lightweight`) and pushes the tag. */
  tag(name: string, lightweight = false): void {
    this.git('tag', ...(lightweight ? [name] : ['-a', name, '-m', name]));
    this.git('push', '--quiet', this.bare, `refs/tags/${name}`);
  }

  /** Pushes the latest commit as another branch too. */
  branch(name: string): void {
    this.git('push', '--quiet', this.bare, `HEAD:refs/heads/${name}`);
  }

  remove(): void {
    fs.rmSync(this.work, { recursive: true, force: true });
  }

  private git(...args: string[]): string {
    return execFileSync('git', ['-C', this.work, ...args], {
      encoding: 'utf8',
      env: { ...process.env, ...GIT_ENV, GIT_AUTHOR_NAME: 'Ops', GIT_AUTHOR_EMAIL: 'ops@example.com', GIT_COMMITTER_NAME: 'Ops', GIT_COMMITTER_EMAIL: 'ops@example.com' },
    }).trim();
  }
}

/** Both servers over one root of repositories, with the token and the deploy key they take. */
export interface GitServers {
  root: string;
  https: HttpsGitServer;
  ssh: SshGitServer;
  token: string;
  deployKey: { privateKey: string; publicKey: string };
  /** A new repository under the root, served by both. */
  repository(name: string): TestRepository;
  close(): Promise<void>;
}

export async function startGitServers(options: { token?: string } = {}): Promise<GitServers> {
  const root = fs.mkdtempSync(path.join(os.tmpdir(), 'pitcrew-git-root-'));
  const token = options.token ?? `ghp_${Math.random().toString(36).slice(2)}${Math.random().toString(36).slice(2)}`;
  const deployKey = makeSshKey();
  const served = await startHttpsGitServer({ root, token });
  const ssh = await startSshGitServer({ root, deployKeyPublic: deployKey.publicKey });
  const repositories: TestRepository[] = [];
  return {
    root, https: served, ssh, token, deployKey,
    repository: (name) => {
      const repository = new TestRepository(root, name);
      repositories.push(repository);
      return repository;
    },
    close: async () => {
      await served.close();
      await ssh.close();
      for (const repository of repositories) repository.remove();
      fs.rmSync(root, { recursive: true, force: true });
    },
  };
}
