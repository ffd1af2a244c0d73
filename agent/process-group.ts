/** Signals a whole process group; false when there is none left to signal (ESRCH) or it is not ours (EPERM). */
export function signalGroup(pgid: number, signal: NodeJS.Signals | 0): boolean {
  try {
    process.kill(-pgid, signal);
    return true;
  } catch {
    return false;
  }
}
