import { readFileSync, unlinkSync } from 'node:fs';
import { link, lstat, open, rename, unlink, writeFile } from 'node:fs/promises';
import { join } from 'node:path';
import { currentBootId, processStart, statFields, UNKNOWN_BOOT } from './process-group.js';

/*
 * One agent per state directory. Two agents sharing one take each other's credential (each
 * enrolment replaces the other's connection, then the service refuses the credential of the
 * wrong host) and each other's journal (a start reports the other's running scripts as
 * interrupted).
 *
 * Why a lock file naming its holder rather than flock(2): Node has no flock without a native
 * addon, and the agent is one bundled file with none. The file is made with link(2), which fails
 * when it exists, from a complete temporary file, so it is never seen half written. It names the
 * holder by pid, process start time and boot id: a holder that crashed, was killed, lost its host
 * to a reboot or had its pid reused is seen as gone, and the next agent breaks its lock. So a
 * crash never leaves the directory locked for ever, and a live agent is never mistaken for gone.
 */

export const LOCK_FILE = 'agent.lock';
/** The lock and the files taking or breaking it leave behind: the agent's own entries of the state directory. */
export const LOCK_ENTRY = /^agent\.lock(\.[0-9]+\.(tmp|stale))?$/;

export interface LockHolder {
  pid: number;
  /** Clock ticks since boot when the holder started (/proc/PID/stat): the pid alone may be reused. */
  start?: string;
  bootId: string;
  hostname: string;
  /** Epoch milliseconds. */
  since: number;
}

/** What this host says now about a holder's pid. */
export interface ProcessProbe {
  bootId: string;
  /** /proc/PID/stat from the state field on; undefined when /proc does not show the process. */
  stat(pid: number): string[] | undefined;
  /** kill(pid, 0) found a process (EPERM included: another user's process is alive). */
  exists(pid: number): boolean;
}

/** Whether the agent that wrote `holder` is still running. */
export function holderIsAlive(holder: LockHolder, probe: ProcessProbe): boolean {
  if (holder.bootId !== UNKNOWN_BOOT && probe.bootId !== UNKNOWN_BOOT && holder.bootId !== probe.bootId) return false;
  const fields = probe.stat(holder.pid);
  // No /proc entry we can read (no /proc, or hidepid): fall back on the signal probe.
  if (fields === undefined) return probe.exists(holder.pid);
  if (fields[0] === 'Z') return false;
  return holder.start === undefined || fields[19] === holder.start;
}

const hostProbe: ProcessProbe = {
  bootId: currentBootId(),
  stat: statFields,
  exists(pid) {
    try {
      process.kill(pid, 0);
      return true;
    } catch (error) {
      return (error as NodeJS.ErrnoException).code === 'EPERM';
    }
  },
};

/** Another live agent holds the state directory. */
export class StateDirBusy extends Error {
  constructor(
    readonly stateDir: string,
    readonly holder: LockHolder,
  ) {
    super(`another pitcrew agent (pid ${holder.pid}, --hostname ${holder.hostname}, running since ${new Date(holder.since).toISOString()}) `
      + `holds the state directory ${stateDir}; two agents sharing one would take each other's credential and journal. `
      + 'Give this agent a state directory of its own with --state-dir DIR (or PITCREW_AGENT_STATE_DIR)');
  }
}

export class StateLock {
  private held = true;

  constructor(
    readonly path: string,
    private readonly holder: LockHolder,
  ) {}

  /**
   * Removes the lock if it is still this process's; safe to call twice, and from an exit handler.
   * After a drop to a --run-as user who may not write the directory, the lock may stay: it names
   * a process that is gone, so the next agent breaks it.
   */
  release(): void {
    if (!this.held) return;
    this.held = false;
    const current = parseHolder(readOr(this.path));
    if (current?.pid !== this.holder.pid || current.start !== this.holder.start) return;
    try {
      unlinkSync(this.path);
    } catch {
      // Left for the next agent to break (above).
    }
  }
}

const ATTEMPTS = 5;

/** Takes the state directory for this process, breaking the lock of an agent that is gone. */
export async function lockStateDir(stateDir: string, hostname: string, probe: ProcessProbe = hostProbe): Promise<StateLock> {
  const path = join(stateDir, LOCK_FILE);
  const mine: LockHolder = { pid: process.pid, start: processStart(process.pid), bootId: probe.bootId, hostname, since: Date.now() };
  const temporary = `${path}.${process.pid}.tmp`;
  // Readable by every user: an agent of another user must be able to name the holder.
  await writeFile(temporary, `${JSON.stringify(mine)}\n`, { mode: 0o644 });
  try {
    for (let attempt = 0; attempt < ATTEMPTS; attempt++) {
      if (await linkIfAbsent(temporary, path)) return new StateLock(path, mine);
      const found = await readLock(path);
      if (!found) continue;
      if (found.holder && holderIsAlive(found.holder, probe)) throw new StateDirBusy(stateDir, found.holder);
      await breakLock(path, found.ino);
    }
    throw new Error(`could not lock ${path}: other agents keep taking it; start one agent per --state-dir`);
  } finally {
    await unlink(temporary).catch(() => undefined);
  }
}

async function linkIfAbsent(from: string, to: string): Promise<boolean> {
  try {
    await link(from, to);
    return true;
  } catch (error) {
    if ((error as NodeJS.ErrnoException).code === 'EEXIST') return false;
    throw error;
  }
}

/** The lock's inode and holder (undefined when unreadable as a holder); undefined when it is gone. */
async function readLock(path: string): Promise<{ ino: number; holder: LockHolder | undefined } | undefined> {
  const handle = await open(path, 'r').catch((error: NodeJS.ErrnoException) => {
    if (error.code === 'ENOENT') return undefined;
    throw error;
  });
  if (!handle) return undefined;
  try {
    const { ino } = await handle.stat();
    return { ino, holder: parseHolder(await handle.readFile('utf8')) };
  } finally {
    await handle.close();
  }
}

/**
 * Removes the lock whose inode is `ino`. It is moved aside first: if another agent broke it and
 * took a fresh lock in the meantime, the file moved is that fresh lock (another inode), and it is
 * put back rather than deleted.
 */
async function breakLock(path: string, ino: number): Promise<void> {
  const aside = `${path}.${process.pid}.stale`;
  try {
    await rename(path, aside);
  } catch (error) {
    if ((error as NodeJS.ErrnoException).code === 'ENOENT') return;
    throw error;
  }
  if ((await lstat(aside)).ino !== ino) await linkIfAbsent(aside, path);
  await unlink(aside);
}

function readOr(path: string): string | undefined {
  try {
    return readFileSync(path, 'utf8');
  } catch {
    return undefined;
  }
}

function parseHolder(text: string | undefined): LockHolder | undefined {
  if (text === undefined) return undefined;
  try {
    const value = JSON.parse(text) as Partial<LockHolder>;
    const valid = Number.isSafeInteger(value.pid) && typeof value.bootId === 'string' && typeof value.hostname === 'string' && typeof value.since === 'number';
    return valid ? (value as LockHolder) : undefined;
  } catch {
    return undefined;
  }
}
