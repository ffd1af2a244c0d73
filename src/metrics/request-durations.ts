import type { Registry } from 'prom-client';

interface Series {
  labels: { method: string; route: string; status: number };
  /** Observations per bucket, not cumulative; the last counts those above every bound. */
  counts: number[];
  sum: number;
  count: number;
}

interface Sample {
  labels: Record<string, string | number>;
  sharedLabels: Record<string, string | number>;
  value: number;
  metricName: string;
  /** prom-client's shape: null for a bucket, absent for the sum and the count (this histogram keeps no exemplars). */
  exemplar: null | undefined;
}

interface Snapshot<T> {
  name: string;
  help: string;
  type: string;
  values: T[];
  aggregator: string;
}

/**
 * The request-duration histogram, scraped exactly as prom-client's Histogram writes it. Every
 * request observes it: prom-client's observe() checks and hashes the label object each time
 * (1.7 % of the ingest benchmark's CPU, bench/README.md), where these series are found through
 * three maps keyed by the values themselves and nothing is allocated.
 */
export class RequestDurations {
  readonly type = 'histogram';
  readonly aggregator = 'sum';
  private readonly series = new Map<string, Map<string, Map<number, Series>>>();
  /** Scraped in the order first seen, as prom-client does. */
  private readonly inOrder: Series[] = [];

  constructor(
    readonly name: string,
    readonly help: string,
    private readonly bounds: readonly number[],
    registry: Registry,
  ) {
    registry.registerMetric(this as never);
  }

  observe(method: string, route: string, status: number, seconds: number): void {
    if (!Number.isFinite(seconds)) throw new TypeError(`Value is not a valid number: ${seconds}`);
    const series = this.seriesOf(method, route, status);
    let bucket = 0;
    while (bucket < this.bounds.length && seconds > this.bounds[bucket]!) bucket += 1;
    series.counts[bucket]! += 1;
    series.sum += seconds;
    series.count += 1;
  }

  /** What the registry writes to /metrics from: the samples, in the order, prom-client's Histogram gives. */
  getForPromString(): Snapshot<Sample> {
    return this.snapshot(this.inOrder.flatMap((series) => this.samplesOf(series)));
  }

  /** The same as JSON (getMetricsAsJSON): each sample's labels with its series' labels merged in, as prom-client's. */
  get(): Snapshot<Omit<Sample, 'sharedLabels'>> {
    const splayed = this.getForPromString().values.map(({ sharedLabels, labels, ...sample }) => ({ ...sample, labels: { ...labels, ...sharedLabels } }));
    return this.snapshot(splayed);
  }

  reset(): void {
    this.series.clear();
    this.inOrder.length = 0;
  }

  private snapshot<T>(values: T[]): Snapshot<T> {
    return { name: this.name, help: this.help, type: this.type, values, aggregator: this.aggregator };
  }

  private samplesOf(series: Series): Sample[] {
    const sample = (labels: Sample['labels'], value: number, suffix: string): Sample => ({
      labels, sharedLabels: series.labels, value, metricName: `${this.name}${suffix}`, exemplar: suffix === '_bucket' ? null : undefined,
    });
    let below = 0;
    const buckets = this.bounds.map((le, i) => sample({ le }, (below += series.counts[i]!), '_bucket'));
    return [...buckets, sample({ le: '+Inf' }, series.count, '_bucket'), sample({}, series.sum, '_sum'), sample({}, series.count, '_count')];
  }

  private seriesOf(method: string, route: string, status: number): Series {
    let byRoute = this.series.get(method);
    if (byRoute === undefined) this.series.set(method, (byRoute = new Map()));
    let byStatus = byRoute.get(route);
    if (byStatus === undefined) byRoute.set(route, (byStatus = new Map()));
    let series = byStatus.get(status);
    if (series === undefined) {
      series = { labels: { method, route, status }, counts: new Array<number>(this.bounds.length + 1).fill(0), sum: 0, count: 0 };
      byStatus.set(status, series);
      this.inOrder.push(series);
    }
    return series;
  }
}
