import { useMemo } from 'react';
import { Link } from 'react-router';
import type { Analytics } from '../api/incident-types';
import { useIntegrations } from '../integrations/queries';
import { NamedOptions } from '../ui/Options';
import { Loadable } from '../ui/states';
import { TableScroll } from '../ui/TableScroll';
import { Chart, type ChartProps } from './Chart';
import { PERIODS, useAnalyticsFilters } from './filters';
import { useAnalytics } from './queries';

const minutes = (value: number) => `${+(value / 60).toFixed(1)} min`;
const whole = (value: number) => (Number.isInteger(value) ? String(value) : '');

/** A number exactly as the API gave it: the tables beside the charts are the API's numbers, unrounded. */
function exact(value: number | null): string {
  return value === null ? '–' : String(value);
}

/**
 * The analytics over resolved incidents (GET /incidents/analytics) for a period and filters, each
 * chart beside the table of the numbers it draws. Loaded on demand with uPlot (Chart.tsx).
 */
export default function AnalyticsSection() {
  const { filters, period, params, set } = useAnalyticsFilters();
  const analytics = useAnalytics(filters);
  const integrations = useIntegrations();
  return (
    <section className="dashboard-section" aria-labelledby="analytics">
      <h2 id="analytics">Analytics</h2>
      <div className="toolbar analytics-toolbar" role="search" aria-label="analytics period and filters">
        <select aria-label="Period" value={period} onChange={(event) => set('period', event.target.value)}>
          {PERIODS.map((p) => (
            <option key={p.value} value={p.value}>
              {p.label}
            </option>
          ))}
        </select>
        {period === 'custom' ? (
          <>
            <input type="date" aria-label="From" value={params.get('from') ?? ''} onChange={(event) => set('from', event.target.value)} />
            <input type="date" aria-label="To" value={params.get('to') ?? ''} onChange={(event) => set('to', event.target.value)} />
          </>
        ) : null}
        <select aria-label="Integration" value={filters.integrationId ?? ''} onChange={(event) => set('integration', event.target.value)}>
          <option value="">Every integration</option>
          <NamedOptions items={integrations.data?.items ?? []} />
        </select>
        <input type="search" aria-label="Host" placeholder="Host" value={params.get('host') ?? ''} onChange={(event) => set('host', event.target.value.trim())} />
        <input type="search" aria-label="Alarm name" placeholder="Alarm name (exact)" value={params.get('alarm') ?? ''} onChange={(event) => set('alarm', event.target.value.trim())} />
        <input type="search" aria-label="Severity" placeholder="Severity" value={params.get('severity') ?? ''} onChange={(event) => set('severity', event.target.value.trim())} />
      </div>
      <Loadable query={analytics} what="the analytics">
        {(data) => <AnalyticsView data={data} />}
      </Loadable>
    </section>
  );
}

function AnalyticsView({ data }: { data: Analytics }) {
  const charts = useMemo(() => chartsOf(data), [data]);
  return (
    <div data-period={`${data.period.from}..${data.period.to}`}>
      <div className="stat-row" aria-label="the period in numbers">
        <Stat label={`resolved, ${data.period.from} to ${data.period.to}`} value={exact(data.resolved)} name="resolved" />
        <Stat label="resolved by automation" value={data.automatedShare === null ? '–' : `${Math.round(data.automatedShare * 1000) / 10} %`} name="automatedShare" title={`${data.automated} of ${data.resolved}: automatedShare ${exact(data.automatedShare)}`} />
        <Stat label="mean time to resolve (s)" value={exact(data.meanSeconds)} name="meanSeconds" />
      </div>
      {data.resolved === 0 ? <p className="muted">No incident resolved in this period with these filters.</p> : (
      <div className="analytics-grid">
        <Panel title="Most frequent alerts" chart={charts.frequent}>
          <NumbersTable head={['Alarm', 'Incidents']} rows={data.frequent.map((r) => [r.alarmName, exact(r.count)])} name="frequent" />
        </Panel>
        <Panel title="Longest resolution" chart={charts.slowest}>
          <NumbersTable
            head={['Alarm', 'Incidents', 'Mean (s)', 'p50 (s)', 'p90 (s)', 'Max (s)']}
            rows={data.slowest.map((r) => [r.alarmName, exact(r.count), exact(r.meanSeconds), exact(r.p50Seconds), exact(r.p90Seconds), exact(r.maxSeconds)])}
            name="slowest"
          />
        </Panel>
        <Panel title="MTTR by day" chart={charts.mttr}>
          <NumbersTable head={['Day', 'Resolved', 'By automation', 'Mean (s)']} rows={data.mttrByDay.map((r) => [r.day, exact(r.count), exact(r.automated), exact(r.meanSeconds)])} name="mttrByDay" />
        </Panel>
        <Panel title="Resolved by automation" chart={charts.automated}>
          <p>
            <strong>{data.automated}</strong> of <strong>{data.resolved}</strong> resolved after a pitcrew fix ran on them
            {data.automatedShare === null ? '.' : ` (automatedShare ${exact(data.automatedShare)}).`}
          </p>
        </Panel>
        <Panel title="Hosts with the most incidents" chart={charts.hosts}>
          <NumbersTable head={['Host', 'Incidents']} rows={data.hosts.map((r) => [r.hostname, exact(r.count)])} name="hosts" />
        </Panel>
        <Panel title="Before and after a rule" chart={charts.rules}>
          {data.rules.length === 0 ? (
            <p className="muted">No alert rule covers these alarms yet: a rule made for one shows here how long its incidents took before and after it.</p>
          ) : (
            <NumbersTable
              head={['Rule', 'Alarm', 'Created', 'Before: incidents', 'Before: mean (s)', 'After: incidents', 'After: mean (s)']}
              rows={data.rules.map((r) => [<Link to={`/rules/${r.ruleId}`}>{r.ruleName}</Link>, r.alarmName, r.createdAt.slice(0, 10), exact(r.before.count), exact(r.before.meanSeconds), exact(r.after.count), exact(r.after.meanSeconds)])}
              name="rules"
            />
          )}
        </Panel>
      </div>
      )}
    </div>
  );
}

function chartsOf(data: Analytics): Record<string, ChartProps | null> {
  const ruleLabel = (r: Analytics['rules'][number]) => `${r.ruleName} (${r.alarmName})`;
  return {
    frequent: data.frequent.length === 0 ? null : { title: 'Most frequent alerts: incidents per alarm', x: { categories: data.frequent.map((r) => r.alarmName) }, series: [{ label: 'incidents', values: data.frequent.map((r) => r.count), color: '--accent' }], formatY: whole },
    slowest: data.slowest.length === 0 ? null : {
      title: 'Longest resolution: mean and p90 per alarm',
      x: { categories: data.slowest.map((r) => r.alarmName) },
      series: [
        { label: 'mean', values: data.slowest.map((r) => r.meanSeconds), color: '--warn' },
        { label: 'p90', values: data.slowest.map((r) => r.p90Seconds), color: '--bad' },
      ],
      formatY: minutes,
    },
    mttr: data.mttrByDay.length === 0 ? null : {
      title: 'MTTR by day: mean time to resolve, and incidents resolved',
      x: { days: data.mttrByDay.map((r) => r.day), from: data.period.from, to: data.period.to },
      series: [
        { label: 'resolved', values: data.mttrByDay.map((r) => r.count), color: '--border-strong', style: 'bars', rightAxis: true },
        { label: 'mean time to resolve', values: data.mttrByDay.map((r) => r.meanSeconds), color: '--accent', style: 'line' },
      ],
      formatY: minutes,
      formatRight: whole,
    },
    automated: data.mttrByDay.length === 0 ? null : {
      title: 'Resolved by automation, per day',
      x: { days: data.mttrByDay.map((r) => r.day), from: data.period.from, to: data.period.to },
      series: [
        { label: 'resolved', values: data.mttrByDay.map((r) => r.count), color: '--border-strong', style: 'bars' },
        { label: 'by automation', values: data.mttrByDay.map((r) => r.automated), color: '--good', style: 'bars' },
      ],
      formatY: whole,
    },
    hosts: data.hosts.length === 0 ? null : { title: 'Hosts with the most incidents', x: { categories: data.hosts.map((r) => r.hostname) }, series: [{ label: 'incidents', values: data.hosts.map((r) => r.count), color: '--info' }], formatY: whole },
    rules: data.rules.length === 0 ? null : {
      title: 'Mean time to resolve before and after each rule',
      x: { categories: data.rules.map(ruleLabel) },
      series: [
        { label: 'before the rule', values: data.rules.map((r) => r.before.meanSeconds), color: '--warn' },
        { label: 'after', values: data.rules.map((r) => r.after.meanSeconds), color: '--good' },
      ],
      formatY: minutes,
    },
  };
}

function Stat({ label, value, name, title }: { label: string; value: string; name: string; title?: string }) {
  return (
    <div className="stat" data-number={name} title={title}>
      <div className="stat-value">{value}</div>
      <div className="stat-label">{label}</div>
    </div>
  );
}

function Panel({ title, chart, children }: { title: string; chart: ChartProps | null | undefined; children: React.ReactNode }) {
  return (
    <section className="panel" aria-label={title}>
      <h3>{title}</h3>
      {chart ? <Chart {...chart} /> : <p className="muted">Nothing to draw for this period.</p>}
      {children}
    </section>
  );
}

function NumbersTable({ head, rows, name }: { head: string[]; rows: React.ReactNode[][]; name: string }) {
  if (rows.length === 0) return null;
  return (
    <TableScroll>
      <table className="table numbers" data-numbers={name}>
        <thead>
          <tr>
            {head.map((h) => (
              <th key={h}>{h}</th>
            ))}
          </tr>
        </thead>
        <tbody>
          {rows.map((row, i) => (
            <tr key={i}>
              {row.map((cell, j) => (
                <td key={j} className={j === 0 ? undefined : 'num mono'}>
                  {cell}
                </td>
              ))}
            </tr>
          ))}
        </tbody>
      </table>
    </TableScroll>
  );
}
