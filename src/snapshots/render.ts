import { createRequire } from 'node:module';
import { chartOption, drawable, legendLines, type ChartRequest } from './chart.js';

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
export async function renderSvg(asked: ChartRequest): Promise<string> {
  const request = drawable(asked);
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
 * The font the text is drawn with: DejaVu Sans from the npm package dejavu-fonts-ttf (the DejaVu
 * fonts' own licence, free to use and bundle), so a machine without system fonts draws the same
 * text; resvg draws none without a font. Read by path alone: scanning the system's fonts costs
 * about 10 ms a render and would draw with whatever a machine happens to have.
 */
export const FONT = { file: createRequire(import.meta.url).resolve('dejavu-fonts-ttf/ttf/DejaVuSans.ttf'), family: 'DejaVu Sans' };

function fontOptions(): { loadSystemFonts: false; fontFiles: string[]; defaultFontFamily: string } {
  return { loadSystemFonts: false, fontFiles: [FONT.file], defaultFontFamily: FONT.family };
}

/** The colours of the series, in order (ECharts' own palette), so a test can look for them. */
export { SERIES_COLOURS } from './chart.js';
