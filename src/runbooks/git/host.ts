import fs from 'node:fs/promises';
import os from 'node:os';
import path from 'node:path';
import { rootCertificates } from 'node:tls';
import type { GitSettings } from '../../config/config.js';
import { RunbookFetchError } from './errors.js';
import { runGit } from './run.js';

const MIN_GIT = [2, 39] as const;

/** The directories git works in on this node, all private to the service (0700). */
export interface GitDirs {
  /** The bare caches, one per repository: <cache>/<repository id>.git. */
  cache: string;
  /** git's HOME: empty, so that no user's configuration or credentials reach it. */
  home: string;
  /** Where each SSH read's key and known_hosts get a directory of their own. */
  scratch: string;
  /** The public CAs and PITCREW_GIT_CA_FILE's, when that is set. */
  caFile: string | undefined;
}

/**
 * What this node gives git: the binary, checked once (2.39 or later: a node without git runs
 * everything else, and reads say so); its private directories; an environment with nothing of the
 * service's own.
 */
export class GitHost {
  private checked: Promise<GitDirs> | undefined;

  constructor(private readonly settings: GitSettings) {}

  /** git checked and the directories made: at the first read, and again after a failure (git may be installed meanwhile). */
  ready(): Promise<GitDirs> {
    this.checked ??= this.check();
    this.checked.catch(() => (this.checked = undefined));
    return this.checked;
  }

  /** Where the repository's cache is, or would be; undefined when the cache is a temp directory not made yet. */
  async cacheOf(repositoryId: string): Promise<string | undefined> {
    const cache = this.settings.cacheDir ?? (this.checked ? (await this.checked).cache : undefined);
    return cache === undefined ? undefined : path.join(cache, `${repositoryId}.git`);
  }

  /**
   * Nothing of the service's environment: a private HOME, no system or user git config, no
   * prompts, paths taken literally. connection.ts adds a server's settings to it; local() commands
   * on the cache take it with git's configuration alone (gitEnv).
   */
  baseEnv(dirs: GitDirs): Record<string, string> {
    return {
      PATH: this.settings.path,
      HOME: dirs.home,
      LC_ALL: 'C',
      GIT_TERMINAL_PROMPT: '0',
      GIT_CONFIG_NOSYSTEM: '1',
      GIT_CONFIG_GLOBAL: '/dev/null',
      GIT_LITERAL_PATHSPECS: '1',
      GIT_NO_REPLACE_OBJECTS: '1',
    };
  }

  private async check(): Promise<GitDirs> {
    let version = '';
    try {
      const run = await runGit(['--version'], { env: { PATH: this.settings.path, LC_ALL: 'C' }, deadline: Date.now() + 10_000 });
      version = run.stdout.toString('utf8').trim();
    } catch (error) {
      if ((error as NodeJS.ErrnoException).code !== 'ENOENT') throw error;
    }
    const [major = 0, minor = 0] = (/(\d+)\.(\d+)/.exec(version) ?? []).slice(1).map(Number);
    if (major < MIN_GIT[0] || (major === MIN_GIT[0] && minor < MIN_GIT[1])) {
      const found = version ? `only ${version} is installed` : 'git is not installed (or not on its PATH)';
      throw new RunbookFetchError('git_missing', `this pitcrew node cannot read runbooks from git repositories: ${found}; install git ${MIN_GIT.join('.')} or later (Debian: apt-get install git)`);
    }
    const cache = this.settings.cacheDir ?? (await fs.mkdtemp(path.join(os.tmpdir(), 'pitcrew-git-')));
    const home = path.join(cache, 'home');
    const scratch = path.join(cache, 'tmp');
    for (const dir of [cache, home, scratch]) await fs.mkdir(dir, { recursive: true, mode: 0o700 });
    let caFile: string | undefined;
    if (this.settings.caPem) {
      // curl's CA file replaces its default bundle: the public CAs (Node's) go in beside the operator's.
      caFile = path.join(cache, 'ca-bundle.pem');
      await fs.writeFile(caFile, `${[...rootCertificates, this.settings.caPem].join('\n')}\n`, { mode: 0o600 });
    }
    return { cache, home, scratch, caFile };
  }
}
