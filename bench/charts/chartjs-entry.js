/* global window, document */
import { BarController, BarElement, CategoryScale, Chart, LinearScale, LineController, LineElement, PointElement, Tooltip } from 'chart.js';
import { alarms, days } from './data.js';

// Only what the two charts use is registered: Chart.js tree-shakes the rest.
Chart.register(BarController, BarElement, CategoryScale, LinearScale, LineController, LineElement, PointElement, Tooltip);
window.draw = (bars, line) => {
  const t0 = performance.now();
  const canvas = (el) => { const c = document.createElement('canvas'); c.width = 600; c.height = 300; el.append(c); return c; };
  const options = { animation: false, responsive: false };
  const b = new Chart(canvas(bars), { type: 'bar', data: { labels: alarms.map((a) => a.name), datasets: [{ label: 'count', data: alarms.map((a) => a.count), backgroundColor: '#4c8' }] }, options });
  const l = new Chart(canvas(line), { type: 'line', data: { labels: days.map((d) => new Date(d.day * 1000).toISOString().slice(0, 10)), datasets: [{ label: 'MTTR', data: days.map((d) => d.mean), borderColor: '#48c' }] }, options });
  const t1 = performance.now();
  return { ms: t1 - t0, destroy: () => { b.destroy(); l.destroy(); bars.replaceChildren(); line.replaceChildren(); } };
};
