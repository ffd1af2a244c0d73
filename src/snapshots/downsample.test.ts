import { describe, expect, it } from 'vitest';
import { downsample, POINTS_PER_COLUMN } from './downsample.js';

type Point = [number, number];

describe('downsample', () => {
  it('leaves a line that is already at most four points a column as it is', () => {
    const points = Array.from({ length: 40 }, (_, i): Point => [i, i % 7]);
    expect(downsample(points, 0, 40, 10)).toBe(points);
  });

  it('keeps each column\'s first, lowest, highest and last point, in time order', () => {
    // Two columns of ten points each over [0, 20).
    const values = [5, 9, 1, 4, 4, 8, 2, 6, 3, 7, 0, 1, 2, 3, 4, 5, 6, 7, 8, 9];
    const points = values.map((value, i): Point => [i, value]);
    expect(downsample(points, 0, 20, 2)).toEqual([[0, 5], [1, 9], [2, 1], [9, 7], [10, 0], [19, 9]]);
  });

  it('keeps a gap in a column, so the line still breaks there', () => {
    const points = Array.from({ length: 20 }, (_, i): Point => [i, i === 13 ? Number.NaN : i]);
    const kept = downsample(points, 0, 20, 2);
    expect(kept.filter(([, value]) => Number.isNaN(value))).toEqual([[13, Number.NaN]]);
    expect(kept.map(([at]) => at)).toEqual([0, 9, 10, 13, 19]);
  });

  it('draws a million points in at most four a column, the extremes among them', () => {
    const points = Array.from({ length: 1_000_000 }, (_, i): Point => [i, Math.sin(i / 1000) + (i === 654_321 ? 50 : 0)]);
    const kept = downsample(points, 0, 1_000_000, 720);
    expect(kept.length).toBeLessThanOrEqual(POINTS_PER_COLUMN * 720);
    expect(kept).toContainEqual([654_321, Math.sin(654.321) + 50]);
    expect(kept[0]).toEqual(points[0]);
    expect(kept.at(-1)).toEqual(points.at(-1));
    expect(kept.every((point, i) => i === 0 || kept[i - 1]![0] < point[0])).toBe(true);
  });

  it('puts points outside the window in its first and last columns', () => {
    const points = Array.from({ length: 30 }, (_, i): Point => [i - 10, i]);
    const kept = downsample(points, 0, 10, 2);
    expect(kept[0]).toEqual([-10, 0]);
    expect(kept.at(-1)).toEqual([19, 29]);
    expect(kept.length).toBeLessThanOrEqual(2 * POINTS_PER_COLUMN);
  });
});
