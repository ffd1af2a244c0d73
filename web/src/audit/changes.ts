/** One field an audited change touched: its path (`target.hostname`) and its JSON before and after (undefined: absent). */
export interface FieldChange {
  path: string;
  before: string | undefined;
  after: string | undefined;
}

/**
 * What changed between an entry's before and after, field by field (nested objects by their
 * path; arrays compared whole, as a person reads a list of tags). Unchanged fields are left out.
 */
export function fieldChanges(before: unknown, after: unknown): FieldChange[] {
  const old = flatten(before);
  const next = flatten(after);
  const paths = [...new Set([...old.keys(), ...next.keys()])].sort();
  return paths.filter((path) => old.get(path) !== next.get(path)).map((path) => ({ path, before: old.get(path), after: next.get(path) }));
}

function flatten(value: unknown, prefix = '', into = new Map<string, string>()): Map<string, string> {
  if (value === undefined) return into;
  if (value !== null && typeof value === 'object' && !Array.isArray(value)) {
    for (const [key, inner] of Object.entries(value)) flatten(inner, prefix ? `${prefix}.${key}` : key, into);
    return into;
  }
  into.set(prefix || '(value)', JSON.stringify(value));
  return into;
}
