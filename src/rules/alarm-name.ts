/**
 * How an alert trigger reads its `alarmName`: between slashes a regular expression (`/…/` or
 * `/…/i`), anything else a glob (`*` any text, `?` one character) over the whole name.
 */
export function alarmNamePattern(text: string): RegExp {
  const regex = /^\/(.+)\/([i]?)$/.exec(text);
  return regex ? new RegExp(regex[1]!, regex[2]) : globPattern(text);
}

/** Why an alarmName cannot be read, if it cannot (a regular expression that does not compile). */
export function alarmNameProblem(text: string): string | undefined {
  try {
    alarmNamePattern(text);
    return undefined;
  } catch (error) {
    return `not a valid regular expression: ${(error as Error).message}; write a glob such as "disk_*", or a regular expression between slashes`;
  }
}

export function globPattern(glob: string): RegExp {
  const escaped = glob.replace(/[.+^${}()|[\]\\]/g, '\\$&').replace(/\*/g, '.*').replace(/\?/g, '.');
  return new RegExp(`^${escaped}$`, 's');
}
