import { lstatSync, mkdirSync, mkdtempSync, readdirSync, rmdirSync } from 'node:fs';
import { rm } from 'node:fs/promises';
import { join } from 'node:path';

/** Where one run happens: its script file goes in `path`, the script runs in `cwd`. */
export interface RunDir {
  path: string;
  cwd: string;
}

/** Kept directories beyond this many (after a burst of parallel runs) are removed. */
const MAX_KEPT = 64;

/**
 * The work directory's run directories, each kept for a later run once a run is done with it.
 *
 * Measured reason: making and removing two directories per run (mkdtemp, mkdir cwd, rmdir both)
 * cost ~0.2 ms of CPU and, while the disk's journal was busy with the agents' own fdatasyncs, up
 * to several ms of waiting on the event loop: with 10 agents in bench/e2e, more of each agent's
 * time than spawning (its CPU profile: rmdir 8 %, mkdir 5 %, mkdtemp 2 %, spawn 15 %). Reusing one
 * costs a few read-only calls that never wait for the journal (/tmp, 3 fdatasync loops beside it:
 * 515 µs → 66 µs per run).
 *
 * A kept directory is used again only if it is still as its last run left it: nothing in it but
 * an empty `cwd`, both private directories. A process the script left running could write there
 * later, so that is checked when the directory is taken, not only when it is given back.
 */
export class RunDirs {
  private readonly kept: RunDir[] = [];

  constructor(readonly workDir: string) {}

  /** A clean run directory: a kept one still as it was left, or a new one. */
  take(): RunDir {
    for (let dir = this.kept.pop(); dir; dir = this.kept.pop()) {
      if (isUntouched(dir)) return dir;
      void remove(dir);
    }
    const path = mkdtempSync(join(this.workDir, 'run-'));
    const cwd = join(path, 'cwd');
    mkdirSync(cwd, { mode: 0o700 });
    return { path, cwd };
  }

  /**
   * The run is over and its own files are gone. The directory is kept when `reusable` (no process
   * of the run is left) and it holds nothing else; otherwise it is removed, in the background.
   */
  giveBack(dir: RunDir, reusable: boolean): Promise<void> {
    if (reusable && this.kept.length < MAX_KEPT && isUntouched(dir)) {
      this.kept.push(dir);
      return Promise.resolve();
    }
    return remove(dir);
  }

  /** Removes the kept directories, when the agent stops: only a run's own directory outlives it. */
  removeKept(): void {
    for (const dir of this.kept.splice(0)) {
      try {
        rmdirSync(dir.cwd);
        rmdirSync(dir.path);
      } catch {
        void remove(dir);
      }
    }
  }
}

/** Nothing in the directory but an empty cwd, both still directories (not links) for this user only. */
function isUntouched(dir: RunDir): boolean {
  try {
    return isPrivateDirectory(dir.path) && isPrivateDirectory(dir.cwd) && only(readdirSync(dir.path), 'cwd') && readdirSync(dir.cwd).length === 0;
  } catch {
    return false;
  }
}

function isPrivateDirectory(path: string): boolean {
  const stat = lstatSync(path);
  return stat.isDirectory() && (stat.mode & 0o077) === 0;
}

function only(names: string[], name: string): boolean {
  return names.length === 1 && names[0] === name;
}

/** A run directory left by an agent that died stays for inspection (docs/agent.md); one given back is removed whole. */
function remove(dir: RunDir): Promise<void> {
  return rm(dir.path, { recursive: true, force: true }).catch(() => undefined);
}
