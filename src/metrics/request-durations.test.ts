import { Histogram, Registry } from 'prom-client';
import { describe, expect, it } from 'vitest';
import { RequestDurations } from './request-durations.js';

const NAME = 'pitcrew_http_request_duration_seconds';
const HELP = 'HTTP request duration by route and status code';
const BOUNDS = [0.0005, 0.001, 0.0025, 0.005, 0.01, 0.025, 0.05, 0.1, 0.25, 0.5, 1, 2.5];

const observations: Array<[string, string, number, number]> = [
  ['POST', '/api/v1/trigger/channel/webhook/:apiKey/:triggerId', 202, 0.0004],
  ['GET', '/api/v1/rules/:id', 200, 0.003],
  ['POST', '/api/v1/trigger/channel/webhook/:apiKey/:triggerId', 401, 0.0005],
  ['POST', '/api/v1/trigger/channel/webhook/:apiKey/:triggerId', 202, 0.012],
  ['GET', 'unmatched', 404, 7],
  ['GET', '/api/v1/rules/:id', 200, 0.25],
  ['POST', '/api/v1/trigger/channel/webhook/:apiKey/:triggerId', 202, 0],
];

describe('RequestDurations', () => {
  it("is scraped exactly as prom-client's Histogram with the same observations", async () => {
    const theirs = new Registry();
    const histogram = new Histogram({ name: NAME, help: HELP, labelNames: ['method', 'route', 'status'], buckets: BOUNDS, registers: [theirs] });
    const ours = new Registry();
    const durations = new RequestDurations(NAME, HELP, BOUNDS, ours);
    for (const [method, route, status, seconds] of observations) {
      histogram.observe({ method, route, status }, seconds);
      durations.observe(method, route, status, seconds);
    }
    expect(await ours.metrics()).toBe(await theirs.metrics());
    expect(await ours.getMetricsAsJSON()).toEqual(await theirs.getMetricsAsJSON());
  });

  it('refuses a duration that is not a number, as prom-client does', () => {
    const durations = new RequestDurations(NAME, HELP, BOUNDS, new Registry());
    expect(() => durations.observe('GET', '/', 200, Number.NaN)).toThrow(TypeError);
  });

  it('starts again from nothing when the registry is reset', async () => {
    const registry = new Registry();
    const durations = new RequestDurations(NAME, HELP, BOUNDS, registry);
    durations.observe('GET', '/', 200, 0.1);
    registry.resetMetrics();
    expect(await registry.metrics()).toBe(`# HELP ${NAME} ${HELP}\n# TYPE ${NAME} histogram\n`);
  });
});
