import { existsSync } from 'node:fs';
import { chartOption, legendLines, type ChartRequest } from './chart.js';

/*
 * Series drawn by pitcrew, without a browser (docs/graph-snapshots.md, "Rendering"): Apache
 * ECharts lays the chart out as SVG in server-side mode (`ssr: true`, `renderToSVGString`), and
 * resvg rasterises that SVG to PNG from its prebuilt binary (an npm package per platform). Both
 * load on the first render: the service starts without them (ECharts takes ~0.9 s to load).
 * Measured against Vega-Lite (bench/snapshot-renderers.mjs, figures in the docs): ECharts gives the
 * SVG in about 60 % of Vega-Lite's time and 75 % of its size, the whole PNG about as fast, from one
 * package instead of two, with mark lines, legend truncation and a UTC time axis built in.
 */

export type { ChartRequest } from './chart.js';

export interface RenderedGraph {
  contentType: 'image/png' | 'image/svg+xml';
  bytes: Uint8Array;
  width: number;
  height: number;
}

/** The picture's height: the plot's, plus a line of legend per series (long label sets stay readable). */
export function chartHeight(request: Pick<ChartRequest, 'height' | 'series'>): number {
  return request.height + legendLines(request.series) * LEGEND_LINE_PX;
}

const LEGEND_LINE_PX = 18;

/** The chart as SVG text, `width` × chartHeight(request) pixels. */
export async function renderSvg(request: ChartRequest): Promise<string> {
  const echarts = await import('echarts');
  const chart = echarts.init(null, null, { renderer: 'svg', ssr: true, width: request.width, height: chartHeight(request) });
  try {
    chart.setOption(chartOption(request, LEGEND_LINE_PX));
    return chart.renderToSVGString();
  } finally {
    chart.dispose();
  }
}

/** The chart as PNG, rasterised from its SVG on a white ground. */
export async function renderPng(request: ChartRequest): Promise<RenderedGraph> {
  const svg = await renderSvg(request);
  const { Resvg } = await import('@resvg/resvg-js');
  const image = new Resvg(svg, { background: 'white', font: fontOptions() }).render();
  return { contentType: 'image/png', bytes: new Uint8Array(image.asPng()), width: image.width, height: image.height };
}

/**
 * The font the text is drawn with. resvg draws no text without one: on Debian, DejaVu Sans
 * (fonts-dejavu-core) or Liberation Sans (fonts-liberation, which Chromium brings) are read by
 * path, which is 10 ms a render faster than resvg scanning every system font; elsewhere it scans.
 */
function fontOptions(): { loadSystemFonts: boolean; fontFiles: string[]; defaultFontFamily: string } {
  fonts ??= FONT_FILES.find((font) => existsSync(font.file));
  if (!fonts) return { loadSystemFonts: true, fontFiles: [], defaultFontFamily: 'sans-serif' };
  return { loadSystemFonts: false, fontFiles: [fonts.file], defaultFontFamily: fonts.family };
}

let fonts: { file: string; family: string } | undefined;

const FONT_FILES = [
  { file: '/usr/share/fonts/truetype/dejavu/DejaVuSans.ttf', family: 'DejaVu Sans' },
  { file: '/usr/share/fonts/truetype/liberation/LiberationSans-Regular.ttf', family: 'Liberation Sans' },
];

/** The colours of the series, in order (ECharts' own palette), so a test can look for them. */
export { SERIES_COLOURS } from './chart.js';
