/* global window, document */
// Chart library candidates for the incident dashboard's analytics (issue 38.3), measured the same
// way: the same two charts (10 ranked bars, a 90-day line) bundled by esbuild as Vite would
// (minified, tree-shaken, ES module), their JavaScript and CSS gzipped at level 9 as
// web/scripts/after-build.mjs counts the budget; then drawn in Debian's Chromium: the first draw
// after the module loads, and the median of 50 redraws, each until the canvases are painted.
// Chromium here draws without a GPU (--disable-gpu): compare the two, not the figures elsewhere.
// Usage: node bench/charts.js   (after `npm install --no-save uplot chart.js` for the comparison)
import fs from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import zlib from 'node:zlib';
import { fileURLToPath } from 'node:url';
import * as esbuild from 'esbuild';
import { launchChromium } from '../scripts/chromium.mjs';

const here = path.dirname(fileURLToPath(import.meta.url));
const CANDIDATES = [
  { name: 'uPlot 1.6.32', entry: 'charts/uplot-entry.js', css: 'uplot/dist/uPlot.min.css' },
  { name: 'Chart.js 4.6.1', entry: 'charts/chartjs-entry.js' },
];
const REDRAWS = 50;

const out = fs.mkdtempSync(path.join(os.tmpdir(), 'pitcrew-charts-'));
const gz = (buffer) => zlib.gzipSync(buffer, { level: 9 }).length;
const kib = (bytes) => `${(bytes / 1024).toFixed(1)} KiB`;
const { context, close } = await launchChromium({ width: 1440, height: 900 });
try {
  for (const candidate of CANDIDATES) {
    const file = path.join(out, `${path.basename(candidate.entry, '.js')}.js`);
    await esbuild.build({ entryPoints: [path.join(here, candidate.entry)], bundle: true, minify: true, format: 'esm', platform: 'browser', target: 'es2022', outfile: file, logLevel: 'error' });
    const js = fs.readFileSync(file);
    const css = candidate.css ? fs.readFileSync(path.join(here, '../node_modules', candidate.css)) : Buffer.alloc(0);
    const page = await context.newPage();
    await page.setContent(`<style>${css}</style><div id="bars"></div><div id="line"></div>`);
    await page.addScriptTag({ content: js.toString(), type: 'module' });
    await page.waitForFunction('typeof window.draw === "function"');
    const timing = await page.evaluate(async (redraws) => {
      const painted = () => [...document.querySelectorAll('canvas')].every((c) => {
        const data = c.getContext('2d').getImageData(0, 0, c.width, c.height).data;
        for (let i = 3; i < data.length; i += 4) if (data[i] !== 0) return true;
        return false;
      });
      const once = async () => {
        const t0 = performance.now();
        const drawn = window.draw(document.getElementById('bars'), document.getElementById('line'));
        // A library may paint in a microtask after its constructor (uPlot batches its commits).
        await null;
        await null;
        const ms = performance.now() - t0;
        if (!painted()) throw new Error('a canvas was left blank');
        drawn.destroy();
        return ms;
      };
      const first = await once();
      const times = [];
      for (let i = 0; i < redraws; i++) times.push(await once());
      times.sort((a, b) => a - b);
      return { first, median: times[Math.floor(times.length / 2)] };
    }, REDRAWS);
    console.log(`${candidate.name.padEnd(16)} JS ${kib(gz(js))} gzipped (${kib(js.length)} minified), CSS ${kib(gz(css))}; ` +
      `first draw ${timing.first.toFixed(1)} ms, redraw median of ${REDRAWS}: ${timing.median.toFixed(1)} ms`);
    await page.close();
  }
} finally {
  await close();
  fs.rmSync(out, { recursive: true, force: true });
}
