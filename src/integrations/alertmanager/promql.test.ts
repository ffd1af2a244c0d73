import { describe, expect, it } from 'vitest';
import { alertSeries, drawnQuery, expressionOf, MissingLabelError, withLabels } from './promql.js';

describe('expressionOf', () => {
  it('reads g0.expr as Prometheus writes it (url.QueryEscape), whatever the address', () => {
    const expr = 'node_load1{job="node"} > 0.5';
    const url = `http://prometheus.internal:9090/graph?g0.expr=${encodeURIComponent(expr).replace(/%20/g, '+')}&g0.tab=1`;
    expect(expressionOf(url)).toBe(expr);
    expect(expressionOf(`/prom/graph?g0.expr=up+%3D%3D+0&g0.tab=1`)).toBe('up == 0');
  });

  it('gives nothing for a URL without an expression', () => {
    expect(expressionOf(undefined)).toBeUndefined();
    expect(expressionOf('http://prometheus:9090/graph')).toBeUndefined();
    expect(expressionOf('http://prometheus:9090/graph?g0.expr=&g0.tab=1')).toBeUndefined();
  });
});

describe('drawnQuery', () => {
  it.each([
    ['node_load1 > 90', { query: 'node_load1', threshold: 90 }],
    ['rate(http_errors_total{code=~"5.."}[5m]) >= 0.05', { query: 'rate(http_errors_total{code=~"5.."}[5m])', threshold: 0.05 }],
    ['up == 0', { query: 'up', threshold: 0 }],
    ['0.9 < avg by (instance) (cpu)', { query: 'avg by (instance) (cpu)', threshold: 0.9 }],
    ['disk_free > bool 1e9', { query: 'disk_free', threshold: 1e9 }],
    ['node_load1 > 2 and on(instance) up == 1', { query: 'node_load1', threshold: 2 }],
    ['a{x="b>c"} > b', { query: 'a{x="b>c"}' }],
    ['sum(rate(x[5m])) / sum(rate(y[5m]))', { query: 'sum(rate(x[5m])) / sum(rate(y[5m]))' }],
    ['absent(up{job="api"})', { query: 'absent(up{job="api"})' }],
    ['max_over_time(temp[10m] offset 5m) > -3.5', { query: 'max_over_time(temp[10m] offset 5m)', threshold: -3.5 }],
    ['vector(1) unless on() up > 0', { query: 'vector(1)' }],
  ])('%s', (expression, drawn) => {
    expect(drawnQuery(expression)).toEqual(drawn);
  });
});

describe('withLabels', () => {
  it('puts the alert’s labels in, escaped for a PromQL string', () => {
    expect(withLabels('node_load1{instance="{{ $labels.instance }}"}', { instance: 'web-1:9100' })).toBe('node_load1{instance="web-1:9100"}');
    expect(withLabels('x{a="{{$labels.a}}"}', { a: 'say "hi"\\' })).toBe('x{a="say \\"hi\\"\\\\"}');
    expect(withLabels('up', {})).toBe('up');
  });

  it('refuses a label the alert does not carry, naming it', () => {
    expect(() => withLabels('x{a="{{ $labels.pod }}"}', { instance: 'a' })).toThrow(MissingLabelError);
    expect(() => withLabels('x{a="{{ $labels.pod }}"}', {})).toThrow(/names the label pod/);
  });
});

describe('alertSeries', () => {
  const series = [{ metric: { __name__: 'node_load1', instance: 'web-1', job: 'node' } }, { metric: { __name__: 'node_load1', instance: 'web-2', job: 'node' } }];

  it('keeps the series whose labels the alert carries', () => {
    expect(alertSeries(series, { alertname: 'HighLoad', instance: 'web-2', job: 'node', severity: 'page' })).toEqual([series[1]]);
  });

  it('keeps every series when none is the alert’s', () => {
    expect(alertSeries(series, { alertname: 'HighLoad', instance: 'db-1' })).toEqual(series);
  });
});
