import type { GraphSeries } from '../integrations/graph-source.js';
import { downsample } from './downsample.js';

/** What one picture shows: a graph's series over the capture's window. */
export interface ChartRequest {
  title: string;
  series: readonly GraphSeries[];
  /** A line across the plot where the alert's expression compares against a number. */
  threshold?: number;
  unit?: string;
  /** Epoch ms: the window drawn, and the alert's start, marked. */
  from: number;
  to: number;
  startedAt: number;
  /** Pixels: the picture's width, and the plot's height above the legend. */
  width: number;
  height: number;
  /** How many series the graph has, when `series` holds only those drawn (`drawable`). */
  seriesCount?: number;
}

/** ECharts' default palette, set explicitly so the colours are a contract a test can check. */
export const SERIES_COLOURS = ['#5470c6', '#91cc75', '#fac858', '#ee6666', '#73c0de', '#3ba272', '#fc8452', '#9a60b4', '#ea7ccc', '#2f4554'] as const;

/** A picture keeps its legend readable: beyond this many series, the rest are counted in the subtitle. */
export const MAX_SERIES = SERIES_COLOURS.length;

export const THRESHOLD_COLOUR = '#d62728';
export const ALERT_START_COLOUR = '#333333';

/** Where the plot is drawn, in pixels from the top: between the title and the time axis's labels. */
export function plotArea(height: number): { top: number; bottom: number } {
  return { top: PLOT_TOP, bottom: height - AXIS_LABELS };
}

const PLOT_TOP = 64;
const AXIS_LABELS = 36;

/**
 * What drawing the picture takes of its request: the series drawn, each as its line looks at the
 * picture's width (downsample.ts), and how many there are in all. It is what the renderer's thread
 * is handed: bounded by the picture's size, not by what the tool returned for the window, since a
 * message too large for the thread's heap ends the whole process, not the thread.
 */
export function drawable(request: ChartRequest): ChartRequest {
  const series = request.series.slice(0, MAX_SERIES).map((drawn) => ({ ...drawn, points: downsample(drawn.points, request.from, request.to, request.width) }));
  return { ...request, series, seriesCount: request.seriesCount ?? request.series.length };
}

export function legendLines(series: readonly GraphSeries[]): number {
  return Math.min(series.length, MAX_SERIES);
}

/** The ECharts option for one picture: pure, so its choices are tested without drawing. */
export function chartOption(request: ChartRequest, legendLinePx: number): Record<string, unknown> {
  const drawn = request.series.slice(0, MAX_SERIES);
  return {
    animation: false,
    useUTC: true,
    backgroundColor: '#ffffff',
    color: [...SERIES_COLOURS],
    textStyle: { fontFamily: 'DejaVu Sans, sans-serif' },
    title: { text: request.title, subtext: subtitle(request), left: 8, top: 4, textStyle: { fontSize: 14 }, subtextStyle: { fontSize: 11 } },
    grid: { left: 56, right: 24, top: PLOT_TOP, height: request.height - PLOT_TOP - AXIS_LABELS },
    xAxis: { type: 'time', min: request.from, max: request.to, axisLabel: { fontSize: 11, hideOverlap: true } },
    yAxis: yAxis(request),
    legend: {
      orient: 'vertical',
      left: 8,
      top: request.height - 4,
      icon: 'roundRect',
      itemHeight: 8,
      itemGap: legendLinePx - 14,
      textStyle: { fontSize: 11, width: request.width - 48, overflow: 'truncate' },
      data: drawn.map((series) => series.name),
    },
    series: [
      ...drawn.map((series) => ({
        type: 'line',
        name: series.name,
        showSymbol: false,
        lineStyle: { width: 1.5 },
        data: series.points.map(([at, value]) => [at, Number.isNaN(value) ? null : value]),
      })),
      marks(request),
    ],
  };
}

function subtitle(request: ChartRequest): string {
  const window = `${utc(request.from)} – ${utc(request.to)} UTC`;
  const count = request.seriesCount ?? request.series.length;
  return count > MAX_SERIES ? `${window}; ${MAX_SERIES} of ${count} series shown` : window;
}

function utc(epochMs: number): string {
  return new Date(epochMs).toISOString().slice(0, 16).replace('T', ' ');
}

function yAxis(request: ChartRequest): Record<string, unknown> {
  return { type: 'value', scale: true, name: request.unit, axisLabel: { fontSize: 11 } };
}

/**
 * The alert's start and the threshold, as mark lines of a series that draws nothing itself: its one
 * point at the threshold keeps the line in the axis's (rounded) range even when the series stay
 * far below it; it is left out of the legend.
 */
function marks(request: ChartRequest): Record<string, unknown> {
  const { threshold } = request;
  return {
    type: 'line',
    name: 'marks',
    silent: true,
    showSymbol: false,
    lineStyle: { opacity: 0 },
    data: threshold === undefined ? [] : [[request.startedAt, threshold]],
    markLine: markLines(request),
  };
}

function markLines(request: ChartRequest): Record<string, unknown> {
  const data: Record<string, unknown>[] = [
    { xAxis: request.startedAt, lineStyle: { color: ALERT_START_COLOUR, type: 'solid', width: 1.5 }, label: { formatter: 'alert start', position: 'insideEndTop', fontSize: 11 } },
  ];
  if (request.threshold !== undefined) {
    data.push({
      yAxis: request.threshold,
      lineStyle: { color: THRESHOLD_COLOUR, type: 'dashed', width: 2 },
      label: { formatter: `threshold ${request.threshold}`, position: 'insideStartTop', fontSize: 11, color: THRESHOLD_COLOUR },
    });
  }
  return { symbol: 'none', silent: true, animation: false, data };
}
