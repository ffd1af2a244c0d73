/*
 * A line drawn across `columns` pixels shows, in each column, where the line enters, how low and how
 * high it goes, and where it leaves: the first, the lowest, the highest and the last point of the
 * column (the M4 aggregation, Jugel et al., "M4: A Visualization-Oriented Time Series Data
 * Aggregation", VLDB 2014). Keeping those four, and a column's first gap where it has one, draws
 * the same line from at most five points a column, whatever a tool returned for a long window.
 */

type Point = [number, number];

/** Points per pixel column a line keeps as it is; past that, each column keeps these four and its first gap. */
export const POINTS_PER_COLUMN = 4;

/**
 * `points` (time order, NaN for a gap) as a line `columns` pixels wide over [from, to] draws them:
 * unchanged when they are already few enough, else each column's first, lowest, highest and last
 * point and its first gap, in time order.
 */
export function downsample(points: Point[], from: number, to: number, columns: number): Point[] {
  if (points.length <= POINTS_PER_COLUMN * columns || to <= from) return points;
  const kept: Point[] = [];
  const span = (to - from) / columns;
  let column = -1;
  let picks: Point[] = [];
  for (const point of points) {
    const at = Math.min(columns - 1, Math.max(0, Math.floor((point[0] - from) / span)));
    if (at !== column) {
      keep(kept, picks);
      column = at;
      picks = [];
    }
    pick(picks, point);
  }
  keep(kept, picks);
  return kept;
}

/** One column's picks, as slots: [first, lowest, highest, last, first gap]. */
function pick(picks: Point[], point: Point): void {
  const value = point[1];
  if (Number.isNaN(value)) {
    picks[4] ??= point;
    return;
  }
  picks[0] ??= point;
  if (picks[1] === undefined || value < picks[1][1]) picks[1] = point;
  if (picks[2] === undefined || value > picks[2][1]) picks[2] = point;
  picks[3] = point;
}

function keep(kept: Point[], picks: Point[]): void {
  const chosen = [...new Set(picks.filter((point) => point !== undefined))];
  chosen.sort((a, b) => a[0] - b[0]);
  kept.push(...chosen);
}
