/*
 * What a graph snapshot reads of a Prometheus alert (docs/graph-snapshots.md, "Prometheus"), pure.
 */

/**
 * The alert's expression from Alertmanager's generatorURL. Prometheus links an alert to its rule's
 * expression as `<external URL>/graph?g0.expr=<url.QueryEscape(expr)>&g0.tab=1`
 * (prometheus/prometheus util/strutil/strconv.go, TableLinkForExpression); only the expression is
 * read, never the address. Undefined when the URL carries none.
 */
export function expressionOf(generatorURL: string | undefined): string | undefined {
  if (!generatorURL) return undefined;
  const query = generatorURL.includes('?') ? generatorURL.slice(generatorURL.indexOf('?') + 1).split('#')[0]! : '';
  const expr = new URLSearchParams(query).get('g0.expr')?.trim();
  return expr ? expr : undefined;
}

/** What to draw for an expression: the side of its comparison that carries the metric, and the number it was compared with. */
export interface DrawnQuery {
  query: string;
  threshold?: number;
}

const COMPARISONS = ['==', '!=', '>=', '<=', '>', '<'] as const;
const SET_OPERATORS = /^(and|or|unless)\b/;

/**
 * An alerting expression such as `node_load1 > 90` filters the series to the samples past 90, which
 * draws as little more than the alert itself; the metric is its left side, drawn whole, with 90 as
 * a line across. Read at the expression's top level only (outside brackets, braces and strings):
 * `a > 90 and b` draws `a` (the first operand of a set operator), `90 < a` draws `a`, `a > b` draws
 * `a` without a line, and an expression with no comparison is drawn as it is.
 */
export function drawnQuery(expression: string): DrawnQuery {
  const first = topLevelSplit(expression, (rest) => SET_OPERATORS.exec(rest)?.[0].length)[0]!.trim();
  const [left, operator, right] = splitOnce(first);
  if (operator === undefined) return { query: first };
  const bare = (side: string) => side.trim().replace(/^bool\b/, '').trim().replace(/^((on|ignoring|group_left|group_right)\s*\([^)]*\)\s*)+/, '').trim();
  const rightSide = bare(right!);
  if (isNumber(rightSide)) return { query: left!.trim(), threshold: Number(rightSide) };
  if (isNumber(left!.trim())) return { query: rightSide, threshold: Number(left!.trim()) };
  return { query: left!.trim() };
}

function splitOnce(expression: string): [string, string?, string?] {
  const parts = topLevelSplit(expression, (rest) => COMPARISONS.find((op) => rest.startsWith(op))?.length, true);
  if (parts.length < 3) return [expression];
  return [parts[0]!, parts[1]!, parts.slice(2).join('')];
}

/**
 * The expression cut where `separator` matches at the top level (its length, or undefined). With
 * keep, the separators are kept as parts of their own: [left, separator, right...].
 */
function topLevelSplit(expression: string, separator: (rest: string) => number | undefined, keep = false): string[] {
  const parts: string[] = [];
  let depth = 0;
  let quote: string | undefined;
  let start = 0;
  for (let i = 0; i < expression.length; i++) {
    const char = expression[i]!;
    if (quote) {
      if (char === '\\') i += 1;
      else if (char === quote) quote = undefined;
      continue;
    }
    if (char === '"' || char === "'" || char === '`') quote = char;
    else if ('({['.includes(char)) depth += 1;
    else if (')}]'.includes(char)) depth -= 1;
    else if (depth === 0 && (i === 0 || /[\s)}\]]/.test(expression[i - 1]!) || !/[a-z]/i.test(char))) {
      const length = separator(expression.slice(i));
      if (length !== undefined && i > start) {
        parts.push(expression.slice(start, i));
        if (keep) parts.push(expression.slice(i, i + length));
        start = i + length;
        i += length - 1;
        if (keep) break;
      }
    }
  }
  parts.push(expression.slice(start));
  return parts;
}

function isNumber(text: string): boolean {
  return /^[+-]?(\d+(\.\d*)?|\.\d+)([eE][+-]?\d+)?$/.test(text);
}

/**
 * A rule's graph query with the alert's labels put in: `{{ $labels.NAME }}` (the syntax of
 * Prometheus's own alert templates) becomes the label's value escaped for a PromQL string, so
 * `up{instance="{{ $labels.instance }}"}` reads the alert's instance. A placeholder naming a
 * label the alert does not carry is an error that names it (a query for every instance instead
 * would draw the wrong picture).
 */
export function withLabels(query: string, labels: Record<string, string>): string {
  return query.replace(PLACEHOLDER, (_, name: string) => {
    const value = labels[name];
    if (value === undefined) throw new MissingLabelError(name, query);
    return value.replace(/\\/g, '\\\\').replace(/"/g, '\\"').replace(/'/g, "\\'").replace(/\n/g, '\\n');
  });
}

const PLACEHOLDER = /\{\{\s*\$labels\.([A-Za-z_][A-Za-z0-9_]*)\s*\}\}/g;

export class MissingLabelError extends Error {
  constructor(readonly label: string, readonly query: string) {
    super(`the query ${query} names the label ${label}, which the alert does not carry`);
    this.name = 'MissingLabelError';
  }
}

/**
 * The alert's own series among those its expression's metric gives: an alert carries its series'
 * labels (less `__name__`) and its rule's own, so a series belongs to the alert when each of its
 * labels has the alert's value. All of them when none does (the rule relabelled them).
 */
export function alertSeries<T extends { metric: Record<string, string> }>(series: readonly T[], alertLabels: Record<string, string>): T[] {
  const own = series.filter((one) => Object.entries(one.metric).every(([name, value]) => name === '__name__' || alertLabels[name] === value));
  return own.length > 0 ? own : [...series];
}
