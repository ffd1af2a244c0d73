// The two candidates measured for drawing a graph snapshot's series (docs/graph-snapshots.md,
// "Rendering"): Apache ECharts' server-side SVG and Vega-Lite compiled to Vega's SVG, each then
// rasterised to PNG by resvg. Vega and Vega-Lite are not dependencies: install them beside to rerun,
//   npm install --no-save vega@6.1.2 vega-lite@6.4.0 && node bench/snapshot-renderers.mjs
import { Resvg } from '@resvg/resvg-js';
import * as echarts from 'echarts';

const N = 240;
const T0 = Date.UTC(2026, 10, 28, 20, 0);
const SERIES = [0, 1, 2].map((k) => ({ name: `{instance="web-${k}", job="node"}`, points: Array.from({ length: N }, (_, i) => [T0 + i * 15000, 50 + 30 * Math.sin(i / 20 + k)]) }));
const START = T0 + 120 * 15000;
const THRESHOLD = 90;
const FONT = { loadSystemFonts: false, fontFiles: ['/usr/share/fonts/truetype/dejavu/DejaVuSans.ttf'], defaultFontFamily: 'DejaVu Sans' };

function echartsSvg() {
  const chart = echarts.init(null, null, { renderer: 'svg', ssr: true, width: 720, height: 354 });
  chart.setOption({
    animation: false, useUTC: true, title: { text: 'cpu > 90' }, legend: { orient: 'vertical', bottom: 0 }, grid: { top: 40, bottom: 70 },
    xAxis: { type: 'time' }, yAxis: { type: 'value', scale: true },
    series: SERIES.map((s, i) => ({ type: 'line', name: s.name, showSymbol: false, data: s.points,
      markLine: i === 0 ? { symbol: 'none', data: [{ yAxis: THRESHOLD }, { xAxis: START }] } : undefined })),
  });
  const svg = chart.renderToSVGString();
  chart.dispose();
  return svg;
}

async function vegaSvg() {
  const [vega, vl] = await Promise.all([import('vega'), import('vega-lite')]);
  const values = SERIES.flatMap((s) => s.points.map(([t, v]) => ({ t, v, s: s.name })));
  const spec = { width: 640, height: 220, title: 'cpu > 90', layer: [
    { data: { values }, mark: 'line', encoding: { x: { field: 't', type: 'temporal' }, y: { field: 'v', type: 'quantitative' }, color: { field: 's', type: 'nominal', legend: { orient: 'bottom' } } } },
    { data: { values: [{ y: THRESHOLD }] }, mark: { type: 'rule', strokeDash: [4, 4] }, encoding: { y: { field: 'y', type: 'quantitative' } } },
    { data: { values: [{ x: START }] }, mark: 'rule', encoding: { x: { field: 'x', type: 'temporal' } } },
  ] };
  const view = new vega.View(vega.parse(vl.compile(spec).spec), { renderer: 'none' });
  const svg = await view.toSVG();
  view.finalize();
  return svg;
}

async function measure(name, draw, rounds = 50) {
  await draw();
  let svg = '';
  const a = performance.now();
  for (let i = 0; i < rounds; i++) svg = await draw();
  const svgMs = (performance.now() - a) / rounds;
  let png = Buffer.alloc(0);
  const b = performance.now();
  for (let i = 0; i < 10; i++) png = new Resvg(svg, { background: 'white', font: FONT }).render().asPng();
  const pngMs = (performance.now() - b) / 10;
  console.log(`${name}: SVG ${svgMs.toFixed(1)} ms, ${svg.length} bytes; PNG ${pngMs.toFixed(1)} ms more, ${png.length} bytes`);
}

await measure('echarts', async () => echartsSvg());
await measure('vega-lite', vegaSvg).catch((error) => console.log(`vega-lite: not measured (${error.message}); install it beside`));
