import { useEffect, useRef } from 'react';
import uPlot from 'uplot';
import 'uplot/dist/uPlot.min.css';

/*
 * The analytics' charts, drawn by uPlot (chosen over Chart.js: bench/charts.js, bench/README.md):
 * a canvas per chart, redrawn when its data or its width changes. This module and uPlot load only
 * with the analytics section (React.lazy in IncidentsPage), never with the first page.
 */

export interface ChartSeries {
  label: string;
  values: Array<number | null>;
  /** A CSS custom property of the theme (--accent, --good…) or a colour. */
  color: string;
  /** Bars (the default for categories) or a line. */
  style?: 'bars' | 'line';
  /** A second y axis on the right (counts beside durations). */
  rightAxis?: boolean;
}

export interface ChartProps {
  /** What it shows, for people who cannot see it (the numbers are in the table beside it too). */
  title: string;
  /** Categories (alarm names, hosts), or UTC days (YYYY-MM-DD) along x within the period's first and last day. */
  x: { categories: string[] } | { days: string[]; from: string; to: string };
  series: ChartSeries[];
  /** How a y value reads on the axis (seconds as minutes…). */
  formatY?: (value: number) => string;
  formatRight?: (value: number) => string;
  height?: number;
}

function themeColour(value: string): string {
  if (!value.startsWith('--')) return value;
  return getComputedStyle(document.documentElement).getPropertyValue(value).trim() || '#4493f8';
}

function translucent(colour: string): string {
  return colour.startsWith('#') && colour.length === 7 ? `${colour}cc` : colour;
}

export function Chart({ title, x, series, formatY, formatRight, height = 240 }: ChartProps) {
  const box = useRef<HTMLDivElement>(null);
  useEffect(() => {
    const element = box.current;
    if (!element) return;
    const categories = 'categories' in x ? x.categories : null;
    const dayOf = (day: string) => Date.parse(`${day}T00:00:00Z`) / 1000;
    const period = 'days' in x ? { from: dayOf(x.from), to: dayOf(x.to) } : null;
    const xs = categories ? categories.map((_, i) => i) : (x as { days: string[] }).days.map(dayOf);
    const text = themeColour('--text-muted');
    const grid = themeColour('--border');
    const bars = series.filter((s) => (s.style ?? (categories ? 'bars' : 'line')) === 'bars');
    const axis = (values?: uPlot.Axis['values'], side?: 1 | 3): uPlot.Axis => ({ stroke: text, grid: { stroke: grid, width: 1 }, ticks: { stroke: grid, width: 1 }, ...(values ? { values } : {}), ...(side ? { side } : {}) });
    const options: uPlot.Options = {
      width: Math.max(320, element.clientWidth),
      height,
      legend: { show: series.length > 1, live: false },
      cursor: { drag: { x: false, y: false } },
      scales: {
        // Days: the whole period, half a day either side, however few days have incidents.
        x: categories ? { time: false, range: [-0.6, Math.max(0, categories.length - 1) + 0.6] } : { time: true, range: [period!.from - 43_200, period!.to + 43_200] },
        y: { range: (_u, _min, max) => [0, max > 0 ? max * 1.1 : 1] },
        right: { range: (_u, _min, max) => [0, max > 0 ? max * 1.1 : 1] },
      },
      axes: [
        categories
          ? { ...axis((_u, splits) => splits.map((i) => shorten(categories[Math.round(i)] ?? ''))), splits: () => xs, size: 40 }
          : axis(),
        { ...axis(formatY ? (_u, splits) => splits.map(formatY) : undefined), size: 76 },
        ...(series.some((s) => s.rightAxis) ? [{ ...axis(formatRight ? (_u, splits) => splits.map(formatRight) : undefined, 1), scale: 'right', grid: { show: false } }] : []),
      ],
      series: [
        { label: categories ? '' : 'day' },
        ...series.map((s): uPlot.Series => {
          const colour = themeColour(s.color);
          const isBar = bars.includes(s);
          const at = bars.indexOf(s);
          return {
            label: s.label,
            scale: s.rightAxis ? 'right' : 'y',
            stroke: colour,
            width: isBar ? 0 : 2,
            fill: isBar ? translucent(colour) : undefined,
            points: { show: !isBar && xs.length < 40 },
            // A day's bar is at most a day wide, whatever the gaps between days with incidents.
            paths: isBar ? uPlot.paths.bars!({ size: [bars.length > 1 ? 0.35 : 0.6, categories ? 64 : Math.max(4, (element.clientWidth - 90) / Math.max(1, (period!.to - period!.from) / 86_400 + 1) * 0.8)], align: bars.length > 1 ? (at === 0 ? -1 : 1) : 0 }) : undefined,
          };
        }),
      ],
    };
    const plot = new uPlot(options, [xs, ...series.map((s) => s.values)], element);
    const observer = new ResizeObserver(() => plot.setSize({ width: Math.max(320, element.clientWidth), height }));
    observer.observe(element);
    return () => {
      observer.disconnect();
      plot.destroy();
    };
  }, [x, series, formatY, formatRight, height]);
  return <div className="chart" ref={box} role="img" aria-label={title} data-chart={title} />;
}

function shorten(label: string): string {
  return label.length > 16 ? `${label.slice(0, 15)}…` : label;
}
