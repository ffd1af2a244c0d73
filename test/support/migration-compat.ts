/**
 * The rule that lets release N-1 run on release N's schema during a rolling upgrade
 * (docs/operations.md, Upgrading): a migration only adds. What its `up` does that the previous
 * release's code could trip on, found in its source: dropping or renaming a table or column,
 * changing a column, or a new NOT NULL column without a default in a table it knows (the old code's
 * inserts leave it out); a table the migration creates is the new release's alone.
 */
export function breaksPreviousRelease(source: string): string[] {
  const up = /export\s+async\s+function\s+up[\s\S]*?(?=export\s+async\s+function\s+down|$)/.exec(source)?.[0] ?? '';
  const found: string[] = [];
  for (const [pattern, what] of DESTRUCTIVE) if (pattern.test(up)) found.push(what);
  // A table the migration creates is new to the previous release, which never writes it: only columns added to a table it knows count.
  for (const statement of up.split(/\.execute\(/).filter((part) => !/\.createTable\(/.test(part))) {
    for (const call of statement.match(/\.addColumn\([^;]*?\)\s*\)/g) ?? []) {
      if (/notNull\(\)/.test(call) && !/defaultTo\(/.test(call)) found.push(`a NOT NULL column without a default: ${call.replace(/\s+/g, ' ')}`);
    }
  }
  return found;
}

const DESTRUCTIVE: Array<[RegExp, string]> = [
  [/\.dropTable\(|\bdrop\s+table\b/i, 'drops a table'],
  [/\.dropColumn\(|\bdrop\s+column\b/i, 'drops a column'],
  [/\.renameTo\(|\.renameColumn\(|\brename\s+(to|column)\b/i, 'renames a table or column'],
  [/\.alterColumn\(|\balter\s+column\b/i, 'changes a column'],
];
