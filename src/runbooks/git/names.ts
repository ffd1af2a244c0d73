/** At most this long: git's own refs stay far below it, and a path past it is no runbook's. */
const MAX_REF_LENGTH = 255;
const MAX_PATH_LENGTH = 4096;

/** A full commit id (SHA-1, or SHA-256 in a repository that uses it), in any case. */
const COMMIT_ID = /^(?:[0-9a-f]{40}|[0-9a-f]{64})$/i;
/** Hex of git's shortest abbreviation (7) or longer, with a digit: no branch name people write looks like that. */
const ABBREVIATED_ID = /^(?=[a-f]*\d)[0-9a-f]{7,63}$/i;

/**
 * The commit a ref pins, when it is a full commit id, in lower case (as git writes ids); undefined
 * for a branch or tag name. A pinned runbook is fetched by that id (sources.ts).
 */
export function pinnedCommit(ref: string): string | undefined {
  return COMMIT_ID.test(ref) ? ref.toLowerCase() : undefined;
}

/**
 * Why `ref` is not a branch or tag name or a full commit id, or undefined: the rules of `git
 * check-ref-format --allow-onelevel` (git-check-ref-format(1)), and no leading "-", which git
 * would read as an option. A full name (refs/heads/…, refs/tags/…) is taken too: it names exactly
 * that ref. An abbreviated commit id is refused: the server can only be asked for a whole one.
 */
export function refProblem(ref: string): string | undefined {
  if (ref === '') return 'is empty; give a branch or tag name, such as main or v1.2.0';
  if (pinnedCommit(ref) === undefined && ABBREVIATED_ID.test(ref)) {
    return `looks like an abbreviated commit id; give the whole id (git rev-parse ${ref} prints it) to pin that commit, or tag the commit and give the tag (a branch named so is refs/heads/${ref})`;
  }
  if (ref.length > MAX_REF_LENGTH) return `is longer than ${MAX_REF_LENGTH} characters`;
  if (ref.startsWith('-')) return 'starts with "-", which git would take for an option';
  if (ref === '@') return 'is "@", which git does not take as a ref name';
  // eslint-disable-next-line no-control-regex -- control characters are what is refused
  if (/[\u0000-\u0020\u007f~^:?*[\\]/.test(ref)) return 'holds a blank, a control character or one of ~ ^ : ? * [ \\, which a git ref name may not';
  if (ref.includes('..') || ref.includes('@{')) return 'holds ".." or "@{", which a git ref name may not';
  if (ref.startsWith('/') || ref.endsWith('/') || ref.includes('//')) return 'starts or ends with "/" or holds "//"; give it as git shows it, such as release/9';
  if (ref.endsWith('.')) return 'ends with ".", which a git ref name may not';
  const badPart = ref.split('/').find((part) => part.startsWith('.') || part.endsWith('.lock'));
  if (badPart !== undefined) return `has the part "${badPart}": no part of a git ref name starts with "." or ends with ".lock"`;
  if (ref.startsWith('refs/') && !/^refs\/(heads|tags)\/./.test(ref)) return 'is a full ref name outside refs/heads/ and refs/tags/; give a branch or tag';
  return undefined;
}

/**
 * Why `path` cannot name a runbook file in a repository, or undefined: it must be relative to the
 * repository's root, in forward slashes, without "." or ".." parts, empty parts, a backslash or
 * control characters, so that it can only ever name one file inside the repository's tree.
 * Pure: rules check a source's path with it when they are saved.
 */
export function runbookPathProblem(path: string): string | undefined {
  if (path === '') return 'is empty; give the file\'s path from the repository\'s root, such as runbooks/disk-cleanup.sh';
  if (path.length > MAX_PATH_LENGTH) return `is longer than ${MAX_PATH_LENGTH} characters`;
  if (path.includes('\u0000')) return 'holds a NUL character';
  // eslint-disable-next-line no-control-regex -- control characters are what is refused
  if (/[\u0001-\u001f\u007f]/.test(path)) return 'holds a control character (a line feed, a tab…)';
  if (path.includes('\\')) return 'holds a backslash; separate folders with "/"';
  if (path.startsWith('/')) return 'starts with "/"; give the path from the repository\'s root without it, such as runbooks/disk-cleanup.sh';
  const parts = path.split('/');
  if (parts.some((part) => part === '..')) return 'holds a ".." part, which would leave the folder it names; give the path from the repository\'s root';
  if (parts.some((part) => part === '.')) return 'holds a "." part; give the path from the repository\'s root without it';
  if (parts.some((part) => part === '')) return 'ends with "/" or holds "//"; give the path of a file';
  return undefined;
}
