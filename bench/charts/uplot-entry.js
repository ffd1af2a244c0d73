/* global window */
import uPlot from 'uplot';
import { alarms, days } from './data.js';

// Bars through uPlot's own bar path builder; the line is its default series.
window.draw = (bars, line) => {
  const t0 = performance.now();
  const x = alarms.map((_, i) => i);
  const b = new uPlot({ width: 600, height: 300, scales: { x: { time: false } }, axes: [{ values: (_, ticks) => ticks.map((t) => alarms[t]?.name ?? '') }, {}],
    series: [{}, { label: 'count', fill: '#4c8', paths: uPlot.paths.bars({ size: [0.6] }) }] }, [x, alarms.map((a) => a.count)], bars);
  const l = new uPlot({ width: 600, height: 300, series: [{}, { label: 'MTTR', stroke: '#48c' }] }, [days.map((d) => d.day), days.map((d) => d.mean)], line);
  const t1 = performance.now();
  return { ms: t1 - t0, destroy: () => { b.destroy(); l.destroy(); } };
};
