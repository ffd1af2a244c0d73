import { readdirSync, readFileSync, readlinkSync } from 'node:fs';

/** Signals a whole process group; false when there is none left to signal (ESRCH) or it is not ours (EPERM). */
export function signalGroup(pgid: number, signal: NodeJS.Signals | 0): boolean {
  try {
    process.kill(-pgid, signal);
    return true;
  } catch {
    return false;
  }
}

/**
 * Whether any process of the group is left (one that is not ours counts). Asked after every run,
 * so the ESRCH that answers "none" is thrown without a stack: capturing one cost ~1 % of an
 * agent's CPU in bench/e2e (perf: ErrnoException under the run's clean-up).
 */
export function groupExists(pgid: number): boolean {
  const limit = Error.stackTraceLimit;
  Error.stackTraceLimit = 0;
  try {
    process.kill(-pgid, 0);
    return true;
  } catch (error) {
    return (error as NodeJS.ErrnoException).code === 'EPERM';
  } finally {
    Error.stackTraceLimit = limit;
  }
}

/**
 * Kills (SIGKILL) the process group of every process whose working directory is `cwd`: a run
 * whose pid the agent never learnt is found by the private directory it started in.
 */
export function killGroupsIn(cwd: string): void {
  let pids: string[];
  try {
    pids = readdirSync('/proc').filter((name) => /^[0-9]+$/.test(name));
  } catch {
    return;
  }
  for (const pid of pids) {
    try {
      if (readlinkSync(`/proc/${pid}/cwd`) !== cwd) continue;
    } catch {
      continue; // gone, or not ours to read
    }
    const pgid = Number(statFields(pid)?.[2]);
    if (pgid > 1) signalGroup(pgid, 'SIGKILL');
  }
}

/**
 * The fields of /proc/PID/stat from the third (state) on, so field N is at index N - 3.
 * Undefined when the process is gone or there is no /proc.
 */
export function statFields(pid: number | string): string[] | undefined {
  try {
    const stat = readFileSync(`/proc/${pid}/stat`, 'utf8');
    // The command name (field 2) may hold spaces and parentheses: count fields after its last ')'.
    return stat.slice(stat.lastIndexOf(')') + 2).split(' ');
  } catch {
    return undefined;
  }
}

/**
 * When a process started, in clock ticks since boot (field 22): with the pid it names one
 * process for the life of a boot. Undefined when the process is gone or there is no /proc.
 */
export function processStart(pid: number): string | undefined {
  return statFields(pid)?.[19];
}

/** The boot id when the kernel does not tell: never equal to a recorded one, so nothing is killed. */
export const UNKNOWN_BOOT = 'unknown';

/** This boot's id, from the kernel: a pid names one process only within one boot. */
export function currentBootId(): string {
  try {
    return readFileSync('/proc/sys/kernel/random/boot_id', 'utf8').trim();
  } catch {
    return UNKNOWN_BOOT;
  }
}
