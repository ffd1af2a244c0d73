/*
 * The shapes of the git repositories API (docs/runbooks.md) that the UI reads and sends. A
 * repository's credential (a read-only token, or an SSH deploy key) is write-only: it goes in with
 * a create or a change and never comes back; the view says only which kind is set (`auth`).
 */

export type RepositoryAuth = 'none' | 'token' | 'ssh_key';

export interface RepositoryTestResult {
  at: string;
  ok: boolean;
  message: string;
  commit?: string;
}

export interface Repository {
  id: string;
  name: string;
  url: string;
  /** The branch, tag or commit its runbooks are read at unless a rule names another. */
  ref: string;
  auth: RepositoryAuth;
  /** SSH only: the known_hosts lines the server's host key is checked against (not a secret). */
  knownHosts: string | null;
  createdAt: string;
  updatedAt: string;
  lastTest: RepositoryTestResult | null;
}

export type RepositoryCredential = { token: string; username?: string } | { sshPrivateKey: string };

export interface RepositoryInput {
  name: string;
  url: string;
  ref: string;
  credential?: RepositoryCredential;
  knownHosts?: string;
}

/** PATCH: what changes; `credential: null` drops the stored one. */
export interface RepositoryPatch {
  name?: string;
  url?: string;
  ref?: string;
  credential?: RepositoryCredential | null;
  knownHosts?: string | null;
}

/** POST /repositories/{id}/test: whether the ref could be read, and at which commit. */
export interface RepositoryTest {
  ok: boolean;
  message: string;
  ref: string;
  commit?: string;
}

/** GET /repositories/{id}/files?ref=: the regular files at the ref's commit (at most 1000); a failure is ok false with what to change. */
export interface RepositoryFiles {
  ok: boolean;
  message: string;
  ref: string;
  commit?: string;
  files: string[];
  truncated: boolean;
}
