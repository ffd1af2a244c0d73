/** Two spaces between columns: what the lists printed before they were aligned, so `awk -F'  +'` keeps working. */
const GAP = '  ';

/**
 * The rows of a list command under its header, each column as wide as its widest cell, so that a
 * person reads down a column at 3 a.m. instead of counting fields. A cell is one line (a newline in
 * a name or a reason would break the row); lines carry no trailing spaces. `empty` is printed
 * instead of a header alone, when there are no rows and the command has something to suggest.
 */
export function table(header: readonly string[], rows: ReadonlyArray<readonly string[]>, empty?: string): string {
  if (rows.length === 0 && empty !== undefined) return empty;
  const lines = [header, ...rows].map((row) => row.map(oneLine));
  const widths = header.map((_, column) => Math.max(...lines.map((row) => width(row[column] ?? ''))));
  return lines.map((row) => row.map((cell, column) => cell + ' '.repeat(Math.max(0, (widths[column] ?? 0) - width(cell)))).join(GAP).trimEnd()).join('\n');
}

function oneLine(cell: string): string {
  return cell.replace(/\s*[\r\n]+\s*/g, ' ');
}

/** Code points, not UTF-16 units: an emoji in a name counts once, as the terminal shows one character. */
function width(cell: string): number {
  return [...cell].length;
}
