/** One line of the allowlist editor; `id` keeps its input and error while rows come and go. */
export interface AllowlistRow {
  id: number;
  value: string;
}

let nextRowId = 1;

export function newRow(value = ''): AllowlistRow {
  return { id: nextRowId++, value };
}

/** What to send: each row that is not blank, trimmed, and the row each entry came from. */
export function allowlistEntries(rows: AllowlistRow[]): { cidrs: string[]; rowIds: number[] } {
  const kept = rows.filter((row) => row.value.trim() !== '');
  return { cidrs: kept.map((row) => row.value.trim()), rowIds: kept.map((row) => row.id) };
}

/** The service names a wrong entry by its index in what was sent (/body/ipAllowlist/2): the row it came from. */
export function allowlistRowOf(rowIds: number[], field: 'ipAllowlist' | 'agentAllowlist' = 'ipAllowlist'): (path: string) => number | undefined {
  const entry = new RegExp(`^/body/${field}/(\\d+)`);
  return (path) => {
    const index = entry.exec(path)?.[1];
    return index === undefined ? undefined : rowIds[Number(index)];
  };
}

export function sameList(a: string[], b: string[]): boolean {
  return a.length === b.length && a.every((value, i) => value === b[i]);
}
