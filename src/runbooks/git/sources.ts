import { createHash } from 'node:crypto';
import fs from 'node:fs/promises';
import path from 'node:path';
import type { Kysely } from 'kysely';
import type { GitSettings } from '../../config/config.js';
import { SecretBoxError, type SecretBox } from '../../identity/secret-box.js';
import type { Database, RepositoryRow } from '../../store/schema.js';
import { gitEnv, openConnection, type Connection, type EgressGate } from './connection.js';
import { labelOf, lastLine, remoteFailure, RunbookFetchError, type RepositoryLabel } from './errors.js';
import { pinnedCommit, refProblem, runbookPathProblem } from './names.js';
import { GitHost } from './host.js';
import { findRepository, openRepositoryCredential } from './repository.js';
import type { StoredCredential } from './schema.js';
import { runGit, type GitRun } from './run.js';
import { isRegularFile, judgePath, parseTree, pathWithFolders } from './tree.js';
import { parseRepositoryUrl, type RepositoryUrl } from './url.js';

export { RunbookFetchError, type FetchProblem } from './errors.js';
export { pinnedCommit, refProblem, runbookPathProblem } from './names.js';
export type { EgressGate } from './connection.js';

/** A runbook in a repository, as a rule names it; `ref` defaults to the repository's. */
export interface RunbookSource {
  repositoryId: string;
  path: string;
  ref?: string | undefined;
}

/** A runbook read from a repository: exactly which commit, and the file's content and hash. */
export interface FetchedRunbook {
  repositoryId: string;
  repositoryName: string;
  path: string;
  ref: string;
  commit: string;
  script: string;
  /** Hex SHA-256 of the file's bytes: scriptSha256(script) of runbooks/repository.ts. */
  sha256: string;
}

/** Where a ref is at the server. */
export interface ResolvedRef {
  /** As asked: main, v1.2.0, or a commit id. */
  ref: string;
  /** As the server names it: refs/heads/main, refs/tags/v1.2.0; for a pinned commit, the commit itself. */
  fullName: string;
  commit: string;
}

export interface RepositoryFiles extends ResolvedRef {
  /** Regular files' paths at the commit, in git's order, at most MAX_LISTED_FILES. */
  files: string[];
  truncated: boolean;
}

export interface GitLogger {
  debug(details: object, message: string): void;
}

export interface GitSourcesDeps {
  db: Kysely<Database>;
  box: SecretBox;
  egress: EgressGate;
  settings: GitSettings;
  logger?: GitLogger | undefined;
}

/** As an inline runbook's script (runbooks/schema.ts MAX_SCRIPT_LENGTH), in bytes. */
export const MAX_RUNBOOK_BYTES = 256 * 1024;
export const MAX_LISTED_FILES = 1000;
// More than the paths of 1000 files take; a bigger tree is cut there, and the list says truncated.
const MAX_LISTING_BYTES = 4 * 1024 * 1024;

/** One read, test or listing of a repository: the server's connection, and the cache's commands without credentials. */
interface Session {
  row: RepositoryRow;
  target: RepositoryLabel;
  connection: Connection;
  deadline: number;
  gitDir: string;
  localEnv: Record<string, string>;
}

/**
 * Reads runbooks from tenants' git repositories, read-only by construction: a bare cache per
 * repository, objects read with ls-tree and cat-file (no work tree, no hooks, no checkout), only
 * https and ssh, the host checked against the egress policy and pinned. Every read asks the server
 * where the ref is now; the cache only spares the download of a commit it already holds.
 * Built once by server/app.ts; the execution stage calls read() before each execution.
 */
export class GitSources {
  /** Per repository, the tail of the fetches into its cache: one at a time, in this process. */
  private readonly locks = new Map<string, Promise<unknown>>();
  private readonly host: GitHost;

  constructor(private readonly deps: GitSourcesDeps) {
    this.host = new GitHost(deps.settings);
  }

  /** The runbook at the ref's commit now; throws RunbookFetchError with what to do. */
  async read(tenantId: string, source: RunbookSource): Promise<FetchedRunbook> {
    const pathProblem = runbookPathProblem(source.path);
    return this.session(tenantId, source.repositoryId, async (session) => {
      const ref = source.ref ?? session.row.ref;
      if (pathProblem) throw new RunbookFetchError('path_escape', `path "${source.path}" ${pathProblem} (${labelOf(session.target)})`);
      const resolved = await this.resolve(session, ref);
      const commit = await this.ensureCommit(session, resolved);
      const bytes = await this.readFile(session, { ...resolved, commit }, source.path);
      const where = `${source.path} at ${describeRef(ref, commit)} of ${labelOf(session.target)}`;
      if (bytes.includes(0)) throw new RunbookFetchError('not_text', `${where} is binary (it holds NUL bytes); a runbook is a text script`);
      let script: string;
      try {
        // The BOM is kept, so that the script's UTF-8 bytes are the file's and its sha256 the file's.
        script = new TextDecoder('utf-8', { fatal: true, ignoreBOM: true }).decode(bytes);
      } catch {
        throw new RunbookFetchError('not_text', `${where} is not UTF-8 text; save the script as UTF-8`);
      }
      const sha256 = createHash('sha256').update(bytes).digest('hex');
      return { repositoryId: session.row.id, repositoryName: session.row.name, path: source.path, ref, commit, script, sha256 };
    });
  }

  /** "Test connection": where the ref is at the server; nothing else is read. A pinned commit is fetched: the one way to ask the server for it. */
  async test(tenantId: string, repositoryId: string, ref?: string): Promise<ResolvedRef> {
    return this.session(tenantId, repositoryId, async (session) => {
      const resolved = await this.resolve(session, ref ?? session.row.ref);
      if (isPinned(resolved)) await this.ensureCommit(session, resolved);
      return resolved;
    });
  }

  /** The regular files at the ref's commit, for a person to pick a runbook's path from. */
  async files(tenantId: string, repositoryId: string, ref?: string): Promise<RepositoryFiles> {
    return this.session(tenantId, repositoryId, async (session) => {
      const resolved = await this.resolve(session, ref ?? session.row.ref);
      const commit = await this.ensureCommit(session, resolved);
      const listed = await this.local(session, ['ls-tree', '-r', '-z', commit], MAX_LISTING_BYTES);
      const regular = parseTree(listed.stdout).filter(isRegularFile).map((entry) => entry.path);
      return { ...resolved, commit, files: regular.slice(0, MAX_LISTED_FILES), truncated: listed.cut || regular.length > MAX_LISTED_FILES };
    });
  }

  /** Drops a repository's cache: it was deleted, or now points elsewhere. */
  async forget(repositoryId: string): Promise<void> {
    const gitDir = await this.host.cacheOf(repositoryId);
    if (gitDir) await this.serialised(repositoryId, () => fs.rm(gitDir, { recursive: true, force: true }));
  }

  private async session<T>(tenantId: string, repositoryId: string, work: (session: Session) => Promise<T>): Promise<T> {
    const row = await findRepository(this.deps.db, tenantId, repositoryId);
    if (!row) throw new RunbookFetchError('no_repository', `repository ${repositoryId} does not exist in this tenant (deleted?); point the rule at a repository of the tenant`);
    const dirs = await this.host.ready();
    const parsed = parseRepositoryUrl(row.url);
    if ('problem' in parsed) throw new RunbookFetchError('unreachable', `repository "${row.name}" has the URL ${row.url}, which ${parsed.problem}`);
    const target = labelFor(row, parsed.url);
    const deadline = Date.now() + this.deps.settings.timeoutSeconds * 1000;
    const connection = await openConnection(
      { ...target, parsed: parsed.url, credential: this.credentialOf(row), knownHosts: row.known_hosts },
      { base: this.host.baseEnv(dirs), egress: this.deps.egress, scratchDir: dirs.scratch, caFile: dirs.caFile, connectTimeoutSeconds: this.deps.settings.timeoutSeconds },
    );
    try {
      return await work({ row, target, connection, deadline, gitDir: path.join(dirs.cache, `${row.id}.git`), localEnv: gitEnv(this.host.baseEnv(dirs), []) });
    } finally {
      await connection.close();
    }
  }

  private credentialOf(row: RepositoryRow): StoredCredential | undefined {
    try {
      return openRepositoryCredential(this.deps.box, row);
    } catch (error) {
      if (!(error instanceof SecretBoxError)) throw error;
      throw new RunbookFetchError('refused', `the credential of ${labelOf(row)} cannot be opened on this node: ${error.message}`);
    }
  }

  /**
   * Where the ref is at the server now (git ls-remote): a tag before a branch of the same name, as
   * git takes them. A full commit id pins that commit: nothing to look up, it is fetched by id.
   */
  private async resolve(session: Session, ref: string): Promise<ResolvedRef> {
    const problem = refProblem(ref);
    if (problem) throw new RunbookFetchError('ref_missing', `ref "${ref}" ${problem} (${labelOf(session.target)}); change the rule's ref`);
    const pinned = pinnedCommit(ref);
    if (pinned) return { ref, fullName: pinned, commit: pinned };
    const names = ref.startsWith('refs/') ? [ref] : [`refs/tags/${ref}`, `refs/heads/${ref}`];
    // name^{} too: ls-remote's patterns match whole names, and an annotated tag's commit is advertised as name^{}.
    const run = await this.remote(session, ['ls-remote', session.connection.url, ...names.flatMap((name) => [name, `${name}^{}`])]);
    const advertised = new Map<string, string>();
    for (const line of run.stdout.toString('utf8').split('\n')) {
      const [oid, name] = line.split('\t');
      // Object ids only (SHA-1 or SHA-256): they go on fetch's command line next.
      if (oid && name && /^(?:[0-9a-f]{40}|[0-9a-f]{64})$/.test(oid)) advertised.set(name, oid);
    }
    for (const name of names) {
      const commit = advertised.get(`${name}^{}`) ?? advertised.get(name);
      if (commit) return { ref, fullName: name, commit };
    }
    throw new RunbookFetchError('ref_missing', `ref ${ref} does not exist in ${labelOf(session.target)}: push it or change the rule's ref`);
  }

  /**
   * The commit in the cache, fetched (depth 1) only when it is not there yet; the commit read (the
   * ref's, if the server moved it meanwhile). A pinned commit is asked for every time, as a ref is
   * looked up every time: a fetch of a commit the cache holds is one exchange with the server.
   */
  private async ensureCommit(session: Session, resolved: ResolvedRef): Promise<string> {
    const { gitDir } = session;
    return this.serialised(session.row.id, async () => {
      const git = (args: string[]) => runGit(['--git-dir', gitDir, ...args], { env: session.connection.env, deadline: session.deadline });
      if (!(await exists(path.join(gitDir, 'HEAD')))) {
        // No template: the bare repository gets no sample hooks (none would run: core.hooksPath is /dev/null).
        await fs.rm(gitDir, { recursive: true, force: true });
        await this.checked(session, await runGit(['init', '--bare', '--quiet', '--template=', gitDir], { env: session.localEnv, deadline: session.deadline }), 'git init');
      }
      const cached = (await runGit(['--git-dir', gitDir, 'cat-file', '-e', `${resolved.commit}^{commit}`], { env: session.localEnv, deadline: session.deadline })).code === 0;
      if (cached && !isPinned(resolved)) return resolved.commit;
      const started = Date.now();
      const common = ['fetch', '--depth', '1', '--no-tags', '--no-write-fetch-head', '--no-auto-maintenance', '--quiet', session.connection.url];
      let fetched = await git([...common, resolved.commit]);
      let commit = resolved.commit;
      // Protocol v2 servers give any commit a ref reaches by its id (gitprotocol-v2(5), fetch: "Wants can
      // be anything and are not limited to advertised objects"); a v0 server only advertised ones.
      const byIdRefused = fetched.code !== 0 && /not our ref|unadvertised object|couldn't find remote ref/i.test(fetched.stderr);
      if (byIdRefused && isPinned(resolved)) throw unfetchablePin(session.target, resolved.commit);
      // A server that serves only advertised refs (protocol v0 without uploadpack.allowReachableSHA1InWant): fetch the ref by name.
      if (byIdRefused) {
        fetched = await git([...common, `+${resolved.fullName}:refs/pitcrew/fetched`]);
        if (fetched.code === 0) commit = (await this.checked(session, await git(['rev-parse', '--verify', 'refs/pitcrew/fetched^{commit}']), 'git rev-parse')).stdout.toString('utf8').trim();
      }
      if (fetched.code !== 0) throw remoteFailure(session.target, this.outcome(session, fetched));
      this.deps.logger?.debug({ repositoryId: session.row.id, commit, ms: Date.now() - started }, 'fetched a commit of a runbook repository into its cache');
      return commit;
    });
  }

  /** The file's bytes at the commit, from git's objects only: the path's entries judged first (symlinks, folders, size). */
  private async readFile(session: Session, at: ResolvedRef, file: string): Promise<Buffer> {
    const listed = await this.local(session, ['ls-tree', '-t', '-z', '-l', at.commit, '--', ...pathWithFolders(file)]);
    const verdict = judgePath(parseTree(listed.stdout), file, MAX_RUNBOOK_BYTES);
    if ('problem' in verdict) {
      const advice = verdict.problem === 'path_missing' ? ": push it or change the rule's path" : '';
      throw new RunbookFetchError(verdict.problem, `${file} ${verdict.what}, at ${describeRef(at.ref, at.commit)} of ${labelOf(session.target)}${advice}`);
    }
    const blob = await this.local(session, ['cat-file', 'blob', verdict.ok.oid], MAX_RUNBOOK_BYTES);
    if (blob.cut) throw new RunbookFetchError('too_big', `${file} is over ${MAX_RUNBOOK_BYTES / 1024} KiB at ${describeRef(at.ref, at.commit)} of ${labelOf(session.target)}`);
    return blob.stdout;
  }

  /** A command on the cache alone (no server): fails as `unreachable` only if the cache is broken. */
  private async local(session: Session, args: string[], maxStdoutBytes?: number): Promise<GitRun> {
    const run = await runGit(['--git-dir', session.gitDir, ...args], { env: session.localEnv, deadline: session.deadline, maxStdoutBytes });
    return run.cut ? run : this.checked(session, run, `git ${args[0]}`);
  }

  private async remote(session: Session, args: string[]): Promise<GitRun> {
    const run = await runGit(args, { env: session.connection.env, deadline: session.deadline });
    if (run.code !== 0) throw remoteFailure(session.target, this.outcome(session, run));
    return run;
  }

  private async checked(session: Session, run: GitRun, what: string): Promise<GitRun> {
    if (run.code === 0) return run;
    if (run.timedOut) throw remoteFailure(session.target, this.outcome(session, run));
    throw new RunbookFetchError('unreachable', `${what} failed in the cache of ${labelOf(session.target)}: ${session.connection.mask(lastLine(run.stderr))}; the operator can delete ${session.row.id}.git under PITCREW_GIT_CACHE_DIR`);
  }

  private outcome(session: Session, run: GitRun) {
    return { stderr: session.connection.mask(run.stderr), timedOut: run.timedOut, timeoutSeconds: this.deps.settings.timeoutSeconds };
  }

  private serialised<T>(repositoryId: string, work: () => Promise<T>): Promise<T> {
    const before = this.locks.get(repositoryId) ?? Promise.resolve();
    const mine = before.then(work, work);
    const tail = mine.catch(() => undefined);
    this.locks.set(repositoryId, tail);
    void tail.then(() => {
      if (this.locks.get(repositoryId) === tail) this.locks.delete(repositoryId);
    });
    return mine;
  }
}

function labelFor(row: RepositoryRow, url: RepositoryUrl): RepositoryLabel {
  return { name: row.name, url: row.url, transport: url.transport, host: url.host, port: url.port };
}

function isPinned(resolved: ResolvedRef): boolean {
  return resolved.fullName === resolved.commit;
}

/** A pinned commit the server would not give: not in the repository, or a server that gives commits by ref name only. */
function unfetchablePin(target: RepositoryLabel, commit: string): RunbookFetchError {
  return new RunbookFetchError('ref_missing', `commit ${commit} could not be fetched from ${labelOf(target)}: the repository has no such commit, or its server gives commits only by branch or tag name (git protocol v0, without uploadpack.allowReachableSHA1InWant). Tag the commit (git tag runbooks-pinned ${commit.slice(0, 12)} && git push origin runbooks-pinned) and set the ref to the tag`);
}

function describeRef(ref: string, commit: string): string {
  if (pinnedCommit(ref)) return `commit ${commit.slice(0, 12)}`;
  return `${ref.replace(/^refs\/(heads|tags)\//, '')} (commit ${commit.slice(0, 12)})`;
}

async function exists(file: string): Promise<boolean> {
  return fs.access(file).then(() => true, () => false);
}
