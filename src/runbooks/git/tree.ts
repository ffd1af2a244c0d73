import type { FetchProblem } from './errors.js';

/** One entry of `git ls-tree -z -l`: its mode says what it is (gitformat-index(5) "object type"). */
export interface TreeEntry {
  mode: string;
  oid: string;
  size: number | undefined;
  path: string;
}

export const MODE = { file: '100644', executable: '100755', symlink: '120000', tree: '040000', submodule: '160000' } as const;

/** Parses `git ls-tree -z [-l]` output; an entry cut off by a stdout limit is left out. */
export function parseTree(output: Buffer): TreeEntry[] {
  const entries: TreeEntry[] = [];
  let from = 0;
  for (let end = output.indexOf(0, from); end !== -1; end = output.indexOf(0, from)) {
    const record = output.subarray(from, end).toString('utf8');
    from = end + 1;
    const tab = record.indexOf('\t');
    const [mode = '', , oid = '', size] = record.slice(0, tab).trim().split(/ +/);
    entries.push({ mode, oid, size: size === undefined || size === '-' ? undefined : Number(size), path: record.slice(tab + 1) });
  }
  return entries;
}

export function isRegularFile(entry: TreeEntry): boolean {
  return entry.mode === MODE.file || entry.mode === MODE.executable;
}

/** The path and every folder on its way: a, a/b, a/b/c.sh. ls-tree is asked for all of them, so a symlinked folder shows. */
export function pathWithFolders(path: string): string[] {
  const parts = path.split('/');
  return parts.map((_, i) => parts.slice(0, i + 1).join('/'));
}

/** Why the path's entry cannot be read as a runbook: its problem and what it is, said of the path. */
export type EntryVerdict = { ok: TreeEntry } | { problem: FetchProblem; what: string };

/**
 * Judges the entries `git ls-tree -t -l <commit> -- a a/b a/b/c.sh` gave: every folder on the way
 * must be a real folder (a symlinked folder ends the walk: git stores the link, not what it points
 * at), and the path a regular file of at most maxBytes.
 */
export function judgePath(entries: TreeEntry[], path: string, maxBytes: number): EntryVerdict {
  const byPath = new Map(entries.map((entry) => [entry.path, entry]));
  const folders = pathWithFolders(path).slice(0, -1);
  for (const folder of folders) {
    const entry = byPath.get(folder);
    if (!entry) return { problem: 'path_missing', what: `does not exist (there is no folder ${folder})` };
    if (entry.mode === MODE.symlink) return { problem: 'symlink', what: `goes through ${folder}, which is a symbolic link; pitcrew reads only what is stored in the repository, not what a link points at` };
    if (entry.mode === MODE.submodule) return { problem: 'not_a_file', what: `is inside ${folder}, which is a submodule (another repository); connect that repository instead` };
    if (entry.mode !== MODE.tree) return { problem: 'path_missing', what: `does not exist (${folder} is a file, not a folder)` };
  }
  const entry = byPath.get(path);
  if (!entry) return { problem: 'path_missing', what: 'does not exist' };
  switch (entry.mode) {
    case MODE.tree:
      return { problem: 'not_a_file', what: 'is a folder; give the path of the script file in it' };
    case MODE.symlink:
      return { problem: 'symlink', what: 'is a symbolic link; pitcrew runs only regular files: point the rule at the file itself' };
    case MODE.submodule:
      return { problem: 'not_a_file', what: 'is a submodule (another repository), not a file' };
    case MODE.file:
    case MODE.executable:
      if (entry.size !== undefined && entry.size > maxBytes) {
        return { problem: 'too_big', what: `is ${kib(entry.size)}; a runbook may be at most ${kib(maxBytes)}` };
      }
      return { ok: entry };
    default:
      return { problem: 'not_a_file', what: `is not a regular file (mode ${entry.mode})` };
  }
}

function kib(bytes: number): string {
  return bytes % 1024 === 0 ? `${bytes / 1024} KiB` : `${(bytes / 1024).toFixed(1)} KiB (${bytes} bytes)`;
}
