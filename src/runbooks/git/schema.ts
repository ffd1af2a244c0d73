import { Type, type Static } from 'typebox';

/*
 * The repositories API's contract (DESIGN.md §7, docs/runbooks.md#git-repositories): at once the
 * validation, the OpenAPI document and the types. What a schema cannot say (a URL git may read, a
 * ref name, a credential that fits the URL, known_hosts lines) is checked in validate.ts.
 */

/** How pitcrew proves itself to the server: nothing (a public repository), a token (HTTPS) or a deploy key (SSH). */
export const AUTH_KINDS = ['none', 'token', 'ssh_key'] as const;
export type AuthKind = (typeof AUTH_KINDS)[number];

/** The user name sent with a token when none is given: GitHub's; GitLab (`oauth2` too) and Gitea take any. */
export const DEFAULT_TOKEN_USERNAME = 'x-access-token';

const Name = Type.String({ minLength: 1, maxLength: 200, pattern: '\\S', description: 'unique in the tenant (leading and trailing blanks are dropped)' });
const Url = Type.String({ minLength: 1, maxLength: 2048, description: 'https://host[:port]/path, ssh://[user@]host[:port]/path or user@host:path; never with a credential inside' });
const Ref = Type.String({ minLength: 1, maxLength: 255, description: 'the branch or tag runbooks are read at unless a rule names another' });
const KnownHosts = Type.String({ minLength: 1, maxLength: 65_536, description: "SSH only, and required for it: the server's host keys as known_hosts lines (ssh-keyscan prints them); host keys are always checked" });
const Time = Type.String({ format: 'date-time' });

export const CredentialInput = Type.Object({
  token: Type.Optional(Type.String({ minLength: 1, maxLength: 4096, description: 'HTTPS: a read-only access token, sent as HTTP Basic' })),
  username: Type.Optional(Type.String({ minLength: 1, maxLength: 256, description: `HTTPS: the user name sent with the token (default ${DEFAULT_TOKEN_USERNAME})` })),
  sshPrivateKey: Type.Optional(Type.String({ minLength: 1, maxLength: 16_384, description: 'SSH: an OpenSSH private key without a passphrase (a deploy key)' })),
}, { additionalProperties: false, description: 'write-only, stored sealed: {token, username?} for HTTPS or {sshPrivateKey} for SSH' });

export const RepositoryInput = Type.Object({
  name: Name,
  url: Url,
  ref: Ref,
  credential: Type.Optional(CredentialInput),
  knownHosts: Type.Optional(KnownHosts),
}, { additionalProperties: false });

export const RepositoryPatch = Type.Object({
  name: Type.Optional(Name),
  url: Type.Optional(Url),
  ref: Type.Optional(Ref),
  credential: Type.Optional(Type.Union([CredentialInput, Type.Null()], { description: 'a new credential, whole; null: none' })),
  knownHosts: Type.Optional(Type.Union([KnownHosts, Type.Null()])),
}, { additionalProperties: false, minProperties: 1 });

const LastTest = Type.Union([
  Type.Object({ at: Time, ok: Type.Boolean(), message: Type.String(), commit: Type.Optional(Type.String()) }),
  Type.Null(),
]);

export const RepositoryView = Type.Object({
  id: Type.String({ format: 'uuid' }),
  name: Type.String(),
  url: Type.String(),
  ref: Type.String(),
  auth: Type.Enum([...AUTH_KINDS], { description: 'what the stored credential is; the credential itself is never returned' }),
  knownHosts: Type.Union([Type.String(), Type.Null()]),
  createdAt: Time,
  updatedAt: Time,
  lastTest: LastTest,
});

const Commit = Type.String({ pattern: '^(?:[0-9a-f]{40}|[0-9a-f]{64})$', description: 'the commit the ref names at the server' });

export const RepositoryTestView = Type.Object({
  ok: Type.Boolean(),
  message: Type.String({ description: 'what the server answered, or what to change when it failed' }),
  ref: Type.String(),
  commit: Type.Optional(Commit),
});

export const RepositoryFilesView = Type.Object({
  ok: Type.Boolean(),
  message: Type.String(),
  ref: Type.String(),
  commit: Type.Optional(Commit),
  files: Type.Array(Type.String(), { description: 'the paths of regular files at the commit, in git\'s order (no symlinks or submodules), at most 1000' }),
  truncated: Type.Boolean({ description: 'true when the commit holds more regular files than were listed' }),
});

export const FilesQuery = Type.Object({
  ref: Type.Optional(Type.String({ minLength: 1, maxLength: 255, description: "default: the repository's ref" })),
}, { additionalProperties: false });

export type CredentialInput = Static<typeof CredentialInput>;
export type RepositoryInput = Static<typeof RepositoryInput>;
export type RepositoryPatch = Static<typeof RepositoryPatch>;
export type RepositoryView = Static<typeof RepositoryView>;
export type RepositoryTestView = Static<typeof RepositoryTestView>;
export type RepositoryFilesView = Static<typeof RepositoryFilesView>;

/** The credential as sealed at rest. */
export type StoredCredential = { kind: 'token'; token: string; username: string } | { kind: 'ssh_key'; sshPrivateKey: string };
