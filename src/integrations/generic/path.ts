/**
 * The paths a generic integration's mapping uses to find fields in a tool's JSON: dot-separated
 * names with `[index]` for arrays, as people write them (`alerts[0].host`, `data.host`).
 * Also accepted: a leading `$` or `$.` (JSONPath habit; `$` alone is the value itself), a quoted
 * name for keys holding dots or brackets (`tags["kubernetes.io/hostname"]`), and a numeric name
 * on an array (`alerts.0.host`). No wildcards or filters: one path, one value.
 */
export type PathSegment = string | number;

export function parsePath(text: string): PathSegment[] | string {
  let rest = text.trim();
  if (rest === '') return 'expected a path such as "host" or "alerts[0].host", got an empty string';
  if (rest.startsWith('$')) {
    rest = rest.slice(1);
    if (rest.startsWith('.')) rest = rest.slice(1);
    if (rest === '') return [];
  }
  const segments: PathSegment[] = [];
  let expectName = true;
  while (rest !== '') {
    if (rest.startsWith('[')) {
      const index = /^\[(\d+)\]/.exec(rest);
      const quoted = /^\[(?:"((?:[^"\\]|\\.)*)"|'([^']*)')\]/.exec(rest);
      if (index) {
        segments.push(Number(index[1]));
        rest = rest.slice(index[0].length);
      } else if (quoted) {
        if (quoted[1] !== undefined) {
          try {
            segments.push(JSON.parse(`"${quoted[1]}"`) as string);
          } catch {
            return `"${text}": the quoted name ${quoted[0]} holds an escape JSON does not know`;
          }
        } else {
          segments.push(quoted[2] as string);
        }
        rest = rest.slice(quoted[0].length);
      } else {
        return `"${text}": after "[" expected an index such as [0] or a quoted name such as ["a.b"]`;
      }
      expectName = false;
    } else if (rest.startsWith('.')) {
      if (expectName) return `"${text}": a name is missing before "."`;
      rest = rest.slice(1);
      expectName = true;
      if (rest === '' || rest.startsWith('.') || rest.startsWith('[')) return `"${text}": a name is missing after "."`;
    } else {
      if (!expectName) return `"${text}": expected "." or "[" before "${rest}"`;
      const name = /^[^.[\]]+/.exec(rest);
      if (!name) return `"${text}": unexpected "${rest[0] as string}"`;
      segments.push(name[0]);
      rest = rest.slice(name[0].length);
      expectName = false;
    }
  }
  return segments;
}

/** The value at the path, or undefined when any step is missing. */
export function valueAt(root: unknown, path: readonly PathSegment[]): unknown {
  let value = root;
  for (const segment of path) {
    if (Array.isArray(value)) {
      const index = typeof segment === 'number' ? segment : /^\d+$/.test(segment) ? Number(segment) : -1;
      value = index >= 0 && index < value.length ? value[index] : undefined;
    } else if (typeof value === 'object' && value !== null && typeof segment === 'string' && Object.hasOwn(value, segment)) {
      value = (value as Record<string, unknown>)[segment];
    } else {
      return undefined;
    }
  }
  return value;
}

/** The RFC 6901 pointer of a path under a base (`/body`), for error paths. */
export function pointerOf(base: string, path: readonly PathSegment[]): string {
  return base + path.map((s) => `/${String(s).replaceAll('~', '~0').replaceAll('/', '~1')}`).join('');
}

/**
 * Puts a value at the path, making the objects and arrays on the way (an index makes an array), and
 * returns the root: the inverse of valueAt, to build a body a mapping reads (the integration's sample).
 * Undefined when the path runs through a value already set that is not a container of the right kind.
 */
export function withValueAt(root: unknown, path: readonly PathSegment[], value: unknown): unknown {
  if (path.length === 0) return value;
  const [head, ...rest] = path as [PathSegment, ...PathSegment[]];
  const container: unknown = root ?? (typeof head === 'number' ? [] : {});
  if (typeof head === 'number' ? !Array.isArray(container) : typeof container !== 'object' || container === null || Array.isArray(container)) return undefined;
  const child = withValueAt((container as Record<PathSegment, unknown>)[head], rest, value);
  if (child === undefined) return undefined;
  (container as Record<PathSegment, unknown>)[head] = child;
  return container;
}
