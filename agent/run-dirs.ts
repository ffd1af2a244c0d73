import { closeSync, constants, fstatSync, lstatSync, mkdirSync, mkdtempSync, openSync, readdirSync, readSync, rmSync, unlinkSync, writeFileSync } from 'node:fs';
import { rm } from 'node:fs/promises';
import { join } from 'node:path';

/** Where one run happens: the script is the file `script`, run in `cwd`. */
export interface RunDir {
  path: string;
  cwd: string;
  script: string;
}

/** Kept directories beyond this many (after a burst of parallel runs) are removed. */
const MAX_KEPT = 64;
const CWD = 'cwd';
const SCRIPT_PREFIX = 'script';

/**
 * The work directory's run directories, each kept for a later run once a run is done with it,
 * with its script file: the next run of the same script (a rule fired again, a fan-out) finds it
 * in place and writes nothing.
 *
 * Measured reason: making and removing two directories and a file per run (mkdtemp, mkdir cwd,
 * create the script; unlink, rmdir both) cost ~0.2 ms of CPU and, while the disk's journal was
 * busy with the agents' own fdatasyncs, up to several ms of waiting on the event loop: with 10
 * agents in bench/e2e, more of each agent's time than spawning (its CPU profile: rmdir 8 %,
 * mkdir 5 %, open 3 %, mkdtemp 2 %; spawn 15 %). Reusing them costs a few read-only calls that
 * never wait for the journal (/tmp, 3 fdatasync loops beside it: 515 µs → 66 µs per run).
 *
 * A kept directory is used again only if it is still as its last run left it: nothing in it but
 * an empty `cwd` and the script file, all private to this user. A process the script left
 * running could change it later, so that is checked when the directory is taken, not only when
 * it is given back; a kept script file is used only if its bytes are the script's.
 */
export class RunDirs {
  private readonly kept: string[] = [];

  constructor(private readonly workDir: string) {}

  /** A clean run directory whose script file (`script` + extension, mode 0700) holds exactly `script`. */
  take(extension: string, script: string): RunDir {
    const content = Buffer.from(script, 'utf8');
    const name = `${SCRIPT_PREFIX}${extension}`;
    for (let path = this.kept.pop(); path; path = this.kept.pop()) {
      const left = untouchedScript(path);
      if (left !== undefined) return withScript(path, left, name, content);
      void remove(path);
    }
    const path = mkdtempSync(join(this.workDir, 'run-'));
    try {
      mkdirSync(join(path, CWD), { mode: 0o700 });
    } catch (error) {
      void remove(path);
      throw error;
    }
    return withScript(path, null, name, content);
  }

  /**
   * The run is over. Its directory is kept when `reusable` (no process of the run is left) and
   * holds nothing but what `take` made; otherwise it is removed, in the background.
   */
  giveBack(dir: RunDir, reusable: boolean): Promise<void> {
    if (reusable && this.kept.length < MAX_KEPT && untouchedScript(dir.path) !== undefined) {
      this.kept.push(dir.path);
      return Promise.resolve();
    }
    return remove(dir.path);
  }

  /** Removes the kept directories, when the agent stops: only a run's own directory outlives it. */
  removeKept(): void {
    for (const path of this.kept.splice(0)) {
      try {
        rmSync(path, { recursive: true, force: true });
      } catch {
        // Left as it is, like a run directory of an agent that died (docs/agent.md).
      }
    }
  }
}

/** The run directory at `path` with its script file holding `content`: the one `left` there if it already does. */
function withScript(path: string, left: string | null, name: string, content: Buffer): RunDir {
  const dir = { path, cwd: join(path, CWD), script: join(path, name) };
  try {
    if (left === name && holds(dir.script, content)) return dir;
    if (left !== null) unlinkSync(join(path, left));
    // wx: a new file, never one a link points to.
    writeFileSync(dir.script, content, { mode: 0o700, flag: 'wx' });
    return dir;
  } catch (error) {
    void remove(path);
    throw error;
  }
}

/**
 * The name of the script file when the directory holds nothing but an empty cwd and that file
 * (null: no script file), all private to this user and none a link; undefined when it holds
 * anything else or cannot be read.
 */
function untouchedScript(path: string): string | null | undefined {
  try {
    if (!isPrivate(path, 'directory') || !isPrivate(join(path, CWD), 'directory') || readdirSync(join(path, CWD)).length > 0) return undefined;
    const others = readdirSync(path).filter((name) => name !== CWD);
    if (others.length === 0) return null;
    const [name] = others;
    return others.length === 1 && name!.startsWith(SCRIPT_PREFIX) && isPrivate(join(path, name!), 'file') ? name! : undefined;
  } catch {
    return undefined;
  }
}

function isPrivate(path: string, kind: 'directory' | 'file'): boolean {
  const stat = lstatSync(path);
  return (kind === 'directory' ? stat.isDirectory() : stat.isFile()) && (stat.mode & 0o077) === 0;
}

/** Whether the regular file at `path` holds exactly `content` (never through a link). */
function holds(path: string, content: Buffer): boolean {
  const fd = openSync(path, constants.O_RDONLY | constants.O_NOFOLLOW);
  try {
    const stat = fstatSync(fd);
    if (!stat.isFile() || stat.size !== content.length) return false;
    const read = Buffer.alloc(content.length + 1);
    return readSync(fd, read, 0, read.length, 0) === content.length && read.subarray(0, content.length).equals(content);
  } finally {
    closeSync(fd);
  }
}

/** A run directory left by an agent that died stays for inspection (docs/agent.md); one given back is removed whole. */
function remove(path: string): Promise<void> {
  return rm(path, { recursive: true, force: true }).catch(() => undefined);
}
