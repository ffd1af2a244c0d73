/**
 * Counts in the words people read (reasons, errors, notifications): "ran once", not "ran 1 times".
 * Every message that words a count goes through these two.
 */

/** How often something happened: "once", "twice", "3 times". */
export function times(n: number): string {
  if (n === 1) return 'once';
  if (n === 2) return 'twice';
  return `${n} times`;
}

/** A number of things: "1 host", "3 hosts"; `plural` for a word that does not take an s. */
export function counted(n: number, singular: string, plural = `${singular}s`): string {
  return `${n} ${n === 1 ? singular : plural}`;
}
