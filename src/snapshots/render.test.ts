import { writeFileSync } from 'node:fs';
import { PNG } from 'pngjs';
import { describe, expect, it } from 'vitest';
import type { GraphSeries } from '../integrations/graph-source.js';
import { MAX_SERIES, plotArea, SERIES_COLOURS, THRESHOLD_COLOUR } from './chart.js';
import { Resvg } from '@resvg/resvg-js';
import { chartHeight, FONT, renderPng, renderSvg, type ChartRequest } from './render.js';

const START = Date.UTC(2026, 10, 28, 20, 0);
const STEP = 15_000;

function wave(instance: string, phase: number): GraphSeries {
  const points = Array.from({ length: 240 }, (_, i): [number, number] => [START + i * STEP, 50 + 30 * Math.sin(i / 20 + phase)]);
  return { name: `{instance="${instance}", job="node"}`, labels: { instance, job: 'node' }, points };
}

function request(series: GraphSeries[], extra: Partial<ChartRequest> = {}): ChartRequest {
  return { title: 'node_load1 > 95', series, threshold: 95, from: START, to: START + 240 * STEP, startedAt: START + 120 * STEP, width: 720, height: 300, ...extra };
}

function decode(bytes: Uint8Array): PNG {
  return PNG.sync.read(Buffer.from(bytes));
}

/** Pixels of the colour in the plot (the legend's swatches, below it, are not counted). */
function countColour(png: PNG, hex: string): number {
  const [r, g, b] = [1, 3, 5].map((at) => Number.parseInt(hex.slice(at, at + 2), 16));
  const { top, bottom } = plotArea(300);
  let count = 0;
  for (let i = top * png.width * 4; i < bottom * png.width * 4; i += 4) {
    if (Math.abs(png.data[i]! - r!) < 12 && Math.abs(png.data[i + 1]! - g!) < 12 && Math.abs(png.data[i + 2]! - b!) < 12) count += 1;
  }
  return count;
}

describe('renderPng', () => {
  it('draws the series in their colours, the threshold, and a legend line per series, at the asked width', async () => {
    const png = await renderPng(request([wave('web-1', 0), wave('web-2', 1)]));
    if (process.env.SNAPSHOT_RENDER_OUT) writeFileSync(process.env.SNAPSHOT_RENDER_OUT, png.bytes);
    const image = decode(png.bytes);
    expect([image.width, image.height]).toEqual([720, 300 + 2 * 18]);
    expect([png.width, png.height]).toEqual([image.width, image.height]);
    expect(countColour(image, SERIES_COLOURS[0])).toBeGreaterThan(200);
    expect(countColour(image, SERIES_COLOURS[1])).toBeGreaterThan(200);
    expect(countColour(image, THRESHOLD_COLOUR)).toBeGreaterThan(50);
  });

  it('draws no threshold line when the expression has none', async () => {
    const image = decode((await renderPng(request([wave('web-1', 0)], { threshold: undefined }))).bytes);
    expect(countColour(image, THRESHOLD_COLOUR)).toBe(0);
    expect(countColour(image, SERIES_COLOURS[0])).toBeGreaterThan(200);
  });

  it('leaves gaps where a series has none and stays white elsewhere (not blank, not filled)', async () => {
    const gappy = wave('web-1', 0);
    gappy.points = gappy.points.map(([at, value], i) => [at, i > 60 && i < 180 ? Number.NaN : value]);
    const whole = decode((await renderPng(request([wave('web-1', 0)]))).bytes);
    const gapped = decode((await renderPng(request([gappy]))).bytes);
    expect(countColour(gapped, SERIES_COLOURS[0])).toBeLessThan(countColour(whole, SERIES_COLOURS[0]) * 0.7);
    expect(countColour(gapped, '#ffffff')).toBeGreaterThan(gapped.width * (plotArea(300).bottom - plotArea(300).top) * 0.6);
  });

  it('shows at most MAX_SERIES series and counts the rest in the subtitle', async () => {
    const many = Array.from({ length: MAX_SERIES + 4 }, (_, i) => wave(`web-${i}`, i));
    const svg = await renderSvg(request(many));
    expect(svg).toContain(`${MAX_SERIES} of ${MAX_SERIES + 4} series shown`);
    expect(svg).toContain('web-0');
    expect(svg).not.toContain(`web-${MAX_SERIES + 1}"`);
    expect(chartHeight(request(many))).toBe(300 + MAX_SERIES * 18);
  });
});

/** Pixels with ink (not near white) in a band of rows across the whole width. */
function inked(png: PNG, fromRow: number, toRow: number): number {
  let count = 0;
  for (let i = fromRow * png.width * 4; i < toRow * png.width * 4; i += 4) if (png.data[i]! + png.data[i + 1]! + png.data[i + 2]! < 600) count += 1;
  return count;
}

describe('the bundled font', () => {
  it('draws the title and legend with system fonts off, where the same SVG without the font has no text', async () => {
    const chart = request([wave('web-1', 0)]);
    const drawn = decode((await renderPng(chart)).bytes);
    const bare = decode(new Resvg(await renderSvg(chart), { background: 'white', font: { loadSystemFonts: false, fontFiles: [] } }).render().asPng());
    // The title's band, above the plot, holds nothing but text; the legend's line, below it, text beside a swatch.
    const titleRows = [0, plotArea(300).top - 12] as const;
    const legendRows = [drawn.height - 18, drawn.height] as const;
    expect(inked(drawn, ...titleRows)).toBeGreaterThan(300);
    expect(inked(bare, ...titleRows)).toBe(0);
    expect(inked(drawn, ...legendRows)).toBeGreaterThan(inked(bare, ...legendRows) + 200);
    expect(FONT.file).toMatch(/node_modules\/dejavu-fonts-ttf\/ttf\/DejaVuSans\.ttf$/);
  });
});

describe('renderSvg', () => {
  it('labels the alert start and the threshold, with the legend as the series are named', async () => {
    const svg = await renderSvg(request([wave('web-1', 0)]));
    expect(svg.startsWith('<svg')).toBe(true);
    expect(svg).toContain('alert start');
    expect(svg).toContain('threshold 95');
    expect(svg).toContain('{instance=&quot;web-1&quot;, job=&quot;node&quot;}');
  });
});
