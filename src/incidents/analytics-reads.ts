import { sql, type Kysely, type RawBuilder } from 'kysely';
import { hostKey } from '../engine/decide.js';
import type { Dialect } from '../store/database.js';
import type { Database } from '../store/schema.js';
import {
  analyticsView, dayOf, ruleAlarms, ruleCovers, slowestAlarms, totalsByAlarm,
  type AlertRuleFacts, type AnalyticsView, type CreationDaySplit, type DayGroup, type HostCount, type Period, type RuleAlarm, type Spread,
} from './analytics.js';
import { rankCandidates, withAlertLabels, type Candidate, type CandidateOptions } from './candidates.js';
import { DAY_MS, DAY_SQL, dayGroupsOfIncidents, duringAnalyticsCall, indexed, refreshIncidentDays, resolvedOnDays, runs, staleDaysWithin } from './rollup.js';

/*
 * The analytics' reads (docs/incidents.md#analytics), the same on SQLite and PostgreSQL but for
 * the percentile functions' syntax and SQLite's index choices (`indexed by`: without statistics
 * its planner took the (tenant, alarm, id) index for a grouping by alarm and read every incident
 * at random, 12 s for a million). What each read costs at a million incidents: bench/README.md.
 */

/** What the dashboard narrows the analytics to; each absent filter takes every incident. */
export interface AnalyticsFilter {
  integrationId?: string | undefined;
  /** Compared as host names are (engine/decide.ts hostKey): without case or surrounding blanks. */
  hostname?: string | undefined;
  alarmName?: string | undefined;
  severity?: string | undefined;
}

export interface AnalyticsQuery {
  period: Period;
  /** Items per list (frequent, slowest, hosts). */
  limit: number;
  filter: AnalyticsFilter;
}

/**
 * A request finding at most this many of its period's days stale recomputes them (a change of the last second:
 * today, maybe yesterday), so that the next finds them done; more, and it reads them from the incidents, leaving
 * their recomputation to the background: a million incidents landed at once, 30 of 90 days recomputed inside the
 * request took 1.3 s on SQLite and 2.4-3.5 s on PostgreSQL, what it read and wrote plus the wait for the
 * background's transaction (bench/README.md).
 */
const RECOMPUTE_IN_REQUEST_UP_TO_DAYS = 2;
/** How many of an alarm's latest incidents newestLabelNames looks through for one with an alert. */
const LABEL_INCIDENTS = 100;

/** The analytics of a tenant's resolved incidents over the query's period and filters. */
export async function readIncidentAnalytics(db: Kysely<Database>, dialect: Dialect, tenantId: string, query: AnalyticsQuery): Promise<AnalyticsView> {
  return duringAnalyticsCall(() => readAnalytics(db, dialect, tenantId, query));
}

async function readAnalytics(db: Kysely<Database>, dialect: Dialect, tenantId: string, query: AnalyticsQuery): Promise<AnalyticsView> {
  const reads = new AnalyticsReads(db, dialect, tenantId, query);
  const groups = await reads.groups();
  const totals = totalsByAlarm(groups);
  const slowest = slowestAlarms(totals, query.limit).map((t) => t.alarmName);
  const resolved = totals.reduce((sum, t) => sum + t.count, 0);
  const pairs = ruleAlarms(await reads.alertRules(), groups);
  return analyticsView({
    period: query.period,
    limit: query.limit,
    groups,
    spreads: await reads.spreads(slowest),
    hosts: resolved === 0 ? [] : await reads.hosts(),
    pairs,
    splits: await reads.creationDaySplits(pairs),
  });
}

/** The automation candidates among a tenant's alarms over the query's period and filters, each with its typical host and its newest alert's labels. */
export async function readAutomationCandidates(
  db: Kysely<Database>, dialect: Dialect, tenantId: string, query: AnalyticsQuery, options: Omit<CandidateOptions, 'limit'>,
): Promise<Candidate[]> {
  const reads = new AnalyticsReads(db, dialect, tenantId, query);
  const candidates = rankCandidates(await reads.groups(), await reads.alertRules(), query.period, { ...options, limit: query.limit });
  const filled: Candidate[] = [];
  for (const candidate of candidates) {
    candidate.typicalHostname = (await reads.typicalHost(candidate.integrationId, candidate.alarmName))?.hostname ?? null;
    filled.push(withAlertLabels(candidate, await reads.newestLabelNames(candidate.integrationId, candidate.alarmName)));
  }
  return filled;
}

export class AnalyticsReads {
  private readonly filter: AnalyticsFilter & { hostKey?: string };
  /** The period's stale days groups() read from the incidents, as runs [first, end); none when it recomputed them. */
  private staleRuns: Array<[number, number]> = [];
  /** PostgreSQL, no filter: the hosts of those stale days, counted in the same pass as their day groups. */
  private staleHosts: HostCountRow[] | undefined;

  constructor(
    private readonly db: Kysely<Database>,
    private readonly dialect: Dialect,
    private readonly tenantId: string,
    private readonly query: AnalyticsQuery,
  ) {
    const { hostname, ...rest } = query.filter;
    this.filter = { ...rest, ...(hostname === undefined ? {} : { hostKey: hostKey(hostname) }) };
  }

  /**
   * The period's resolved incidents by day and alarm: from incident_days (its stale days in the
   * period recomputed first), or, asked for one host, from that host's incidents (the days are not kept per host).
   */
  async groups(): Promise<DayGroup[]> {
    if (this.filter.hostKey !== undefined) {
      const rows = await sql<GroupRow>`select resolved_at / ${sql.raw(String(DAY_MS))} as day, coalesce(integration_id, '') as integration_id, alarm_name, coalesce(severity, '') as severity,
          count(*) as resolved, sum(case when resolved_by = 'automation' then 1 else 0 end) as automated, sum(resolved_at - opened_at) as total_ms, max(resolved_at - opened_at) as max_ms
        from incidents ${indexed(this.dialect, this.hostIndex())} where ${this.resolvedWithin()}
        group by 1, 2, 3, 4`.execute(this.db);
      return rows.rows.map(groupOf);
    }
    const stale = await staleDaysWithin(this.db, this.tenantId, this.query.period);
    if (stale.length > RECOMPUTE_IN_REQUEST_UP_TO_DAYS) return this.groupsBesideStaleDays(stale);
    // The background (rollup-refresher.ts) has usually recomputed them already: what it has not yet, the period's, is recomputed here.
    if (stale.length > 0) await refreshIncidentDays(this.db, this.dialect, this.tenantId, { within: this.query.period, wait: true });
    return (await this.rollupRows([]).execute()).map(groupOf);
  }

  /**
   * Many stale days (a million incidents landed at once: an upgrade through migration 0028, a history imported):
   * the fresh days from the rollup, the stale ones grouped from the incidents, read alone, while the background
   * writes them. Exact as a recomputation: the same grouping, of the incidents committed before each read.
   */
  private async groupsBesideStaleDays(stale: readonly number[]): Promise<DayGroup[]> {
    this.staleRuns = runs(stale);
    const { integrationId, alarmName, severity } = this.filter;
    const keys = [
      ...(integrationId === undefined ? [] : [sql`coalesce(integration_id, '') = ${integrationId}`]),
      ...(alarmName === undefined ? [] : [sql`alarm_name = ${alarmName}`]),
      ...(severity === undefined ? [] : [sql`coalesce(severity, '') = ${severity}`]),
    ];
    const groups = (await this.rollupRows(stale).execute()).map(groupOf);
    if (this.dialect === 'postgres' && keys.length === 0) this.staleHosts = [];
    for (const [first, end] of this.staleRuns) {
      if (this.staleHosts === undefined) {
        groups.push(...(await sql<GroupRow>`${dayGroupsOfIncidents(this.dialect, this.tenantId, first, end, keys)}`.execute(this.db)).rows.map(groupOf));
        continue;
      }
      const rows = (await sql<GroupRow & { host_key: string | null }>`${this.dayAndHostGroupsOfIncidents(first, end)}`.execute(this.db)).rows;
      for (const row of rows) {
        if (row.host_key === null) groups.push(groupOf(row));
        else this.staleHosts.push({ host_key: row.host_key, count: row.resolved });
      }
    }
    return groups.sort((a, b) => a.day - b.day);
  }

  /**
   * PostgreSQL, no filter: the stale days' groups of rollup.ts dayGroupsOfIncidents and their hosts (host_key set,
   * the day groups' null) from one read of the day index, which holds the host too: the two reads of ~330,000
   * index entries each were most of the call made at once after a million landed (bench/README.md, session 32).
   */
  private dayAndHostGroupsOfIncidents(first: number, end: number): RawBuilder<unknown> {
    const day = sql.raw(DAY_SQL);
    return sql`with grouped as (select grouping(host_key) = 0 as by_host, ${day} as day, integration_id, alarm_name, severity, host_key, count(*) as resolved,
        sum(case when resolved_by = 'automation' then 1 else 0 end) as automated, sum(resolved_at - opened_at) as total_ms, max(resolved_at - opened_at) as max_ms
      from incidents where ${resolvedOnDays(this.tenantId, first, end)}
      group by grouping sets ((${day}, integration_id, alarm_name, severity), (host_key)))
    select day, coalesce(integration_id, '') as integration_id, alarm_name, coalesce(severity, '') as severity, null as host_key,
      sum(resolved) as resolved, sum(automated) as automated, sum(total_ms) as total_ms, max(max_ms) as max_ms
    from grouped where not by_host
    group by day, coalesce(integration_id, ''), alarm_name, coalesce(severity, '')
    union all
    select null, null, null, null, host_key, resolved, null, null, null from grouped where by_host and host_key <> ''`;
  }

  /** The period's rows of incident_days, but for the days given, narrowed by the filters. */
  private rollupRows(exceptDays: readonly number[]) {
    const { firstDay, endDay } = this.query.period;
    const { integrationId, alarmName, severity } = this.filter;
    let select = this.db.selectFrom('incident_days').selectAll()
      .where('tenant_id', '=', this.tenantId).where('day', '>=', firstDay).where('day', '<', endDay);
    if (exceptDays.length > 0) select = select.where('day', 'not in', exceptDays);
    if (integrationId !== undefined) select = select.where('integration_id', '=', integrationId);
    if (alarmName !== undefined) select = select.where('alarm_name', '=', alarmName);
    if (severity !== undefined) select = select.where('severity', '=', severity);
    return select;
  }

  /** p50 and p90 of the named alarms' resolution times, computed by the database (analytics.ts percentile). */
  async spreads(alarmNames: readonly string[]): Promise<Spread[]> {
    if (alarmNames.length === 0) return [];
    const duration = sql`resolved_at - opened_at`;
    const [p50, p90] = this.dialect === 'postgres'
      ? [sql`percentile_cont(0.5) within group (order by ${duration})`, sql`percentile_cont(0.9) within group (order by ${duration})`]
      // SQLite's percentile extension (built into better-sqlite3's SQLite, SQLITE_ENABLE_PERCENTILE).
      : [sql`percentile_cont(${duration}, 0.5)`, sql`percentile_cont(${duration}, 0.9)`];
    const index = this.filter.hostKey !== undefined ? this.hostIndex() : 'incidents_resolved_alarm';
    const rows = await sql<{ alarm_name: string; p50: number | string; p90: number | string }>`select alarm_name, ${p50} as p50, ${p90} as p90
      from incidents ${indexed(this.dialect, index)}
      where ${this.resolvedWithin()} and alarm_name in (${sql.join([...alarmNames])})
      group by alarm_name`.execute(this.db);
    return rows.rows.map((r) => ({ alarmName: r.alarm_name, p50Ms: Number(r.p50), p90Ms: Number(r.p90) }));
  }

  /** The hosts with the most incidents, most first, ties by host key. */
  async hosts(): Promise<HostCount[]> {
    const { integrationId, alarmName, severity, hostKey: key } = this.filter;
    const rows = integrationId === undefined && alarmName === undefined && severity === undefined && key === undefined
      ? await this.hostCountsOfDays() : await this.hostCounts();
    const hosts: HostCount[] = [];
    for (const r of rows) hosts.push({ hostname: await this.hostnameOf(r.host_key), count: Number(r.count) });
    return hosts;
  }

  /** Without filters: from the per-day rollup (brought up to date by groups()), at most hosts × days rows; the stale days groups() left from the incidents. */
  private async hostCountsOfDays(): Promise<HostCountRow[]> {
    const { firstDay, endDay } = this.query.period;
    const stale = this.staleRuns.flatMap(([first, end]) => Array.from({ length: end - first }, (_, i) => first + i));
    const fresh = sql`select host_key, sum(resolved) as count from incident_host_days
      where tenant_id = ${this.tenantId} and day >= ${firstDay} and day < ${endDay}${stale.length > 0 ? sql` and day not in (${sql.join(stale)})` : sql``}
      group by host_key`;
    const ofIncidents = this.staleHosts !== undefined
      ? [sql`select * from unnest(cast(${this.staleHosts.map((h) => h.host_key)} as text[]), cast(${this.staleHosts.map((h) => String(h.count))} as numeric[])) as stale (host_key, count)`]
      : this.staleRuns.map(([first, end]) => sql`select host_key, count(*) as count
        from incidents ${indexed(this.dialect, 'incidents_resolved_day_host')} where ${resolvedOnDays(this.tenantId, first, end)} and host_key <> ''
        group by host_key`);
    const rows = await sql<HostCountRow>`select host_key, sum(count) as count from (${sql.join([fresh, ...ofIncidents], sql` union all `)}) as hosts
      group by host_key order by sum(count) desc, host_key limit ${this.query.limit}`.execute(this.db);
    return rows.rows;
  }

  /**
   * With filters: from the incidents, counted from a covering index alone; the hosts' names are read
   * after, for the few listed: a name per counted incident is a read of its row, 7 s instead of
   * 0.8 s over a million on SQLite (measured). Without an alarm or a host, the period's incidents
   * that name a host are grouped by host from the day-and-host index: the index by host that spared
   * that grouping cost every resolution an entry (migration 0041).
   */
  private async hostCounts(): Promise<HostCountRow[]> {
    const index = this.filter.hostKey !== undefined ? this.hostIndex()
      : this.filter.alarmName !== undefined ? 'incidents_resolved_alarm' : 'incidents_resolved_day_host';
    // The day indexes are ranged by their own expression (migration 0034): the same whole days as the times.
    const byDay = this.filter.hostKey === undefined && index !== 'incidents_resolved_alarm'
      ? sql` and ${sql.raw(DAY_SQL)} >= ${this.query.period.firstDay} and ${sql.raw(DAY_SQL)} < ${this.query.period.endDay}` : sql``;
    const rows = await sql<HostCountRow>`select host_key, count(*) as count
      from incidents ${indexed(this.dialect, index)}
      where ${this.resolvedWithin()}${byDay} and host_key <> ''
      group by host_key order by count(*) desc, host_key limit ${this.query.limit}`.execute(this.db);
    return rows.rows;
  }

  /**
   * How the host is named on its latest resolved incident that names it (its key is the name
   * without case): the analytics count resolved ones, and only those have an index by host (migration 0042).
   */
  private async hostnameOf(key: string): Promise<string> {
    const named = await this.db.selectFrom('incidents').select('hostname').where('tenant_id', '=', this.tenantId).where('state', '=', 'resolved').where('host_key', '=', key)
      .where('hostname', 'is not', null).orderBy('id', 'desc').limit(1).executeTakeFirst();
    return named?.hostname ?? key;
  }

  /** The tenant's rules with an alert trigger (not deleted), oldest first. */
  async alertRules(): Promise<AlertRuleFacts[]> {
    const rows = await this.db.selectFrom('rules').select(['id', 'name', 'enabled', 'integration_id', 'trigger', 'created_at'])
      .where('tenant_id', '=', this.tenantId).where('trigger_type', '=', 'alert').where('deleted_at', 'is', null)
      .orderBy('created_at').orderBy('id').execute();
    return rows.flatMap((row) => {
      if (row.integration_id === null) return [];
      const trigger = JSON.parse(row.trigger) as { alarmName?: string; severity?: string[] };
      return [{ id: row.id, name: row.name, enabled: row.enabled === 1, integrationId: row.integration_id, alarmName: trigger.alarmName, severity: trigger.severity, createdAt: Number(row.created_at) }];
    });
  }

  /** For each (rule, alarm) created within the period: that day's incidents of the alarm the rule covers, resolved before and after its creation. */
  async creationDaySplits(pairs: readonly RuleAlarm[]): Promise<CreationDaySplit[]> {
    const { firstDay, endDay } = this.query.period;
    const splits: CreationDaySplit[] = [];
    for (const { rule, alarmName } of pairs) {
      const day = dayOf(rule.createdAt);
      if (day < firstDay || day >= endDay) continue;
      const rows = await sql<{ integration_id: string; severity: string; before_count: number | string; before_ms: number | string | null; after_count: number | string; after_ms: number | string | null }>`
        select coalesce(integration_id, '') as integration_id, coalesce(severity, '') as severity,
          sum(case when resolved_at < ${rule.createdAt} then 1 else 0 end) as before_count,
          sum(case when resolved_at < ${rule.createdAt} then resolved_at - opened_at else 0 end) as before_ms,
          sum(case when resolved_at >= ${rule.createdAt} then 1 else 0 end) as after_count,
          sum(case when resolved_at >= ${rule.createdAt} then resolved_at - opened_at else 0 end) as after_ms
        from incidents ${indexed(this.dialect, this.filter.hostKey !== undefined ? this.hostIndex() : 'incidents_resolved_alarm')}
        where ${this.resolvedWithin({ firstDay: day, endDay: day + 1 })} and alarm_name = ${alarmName}
        group by 1, 2`.execute(this.db);
      const split: CreationDaySplit = { ruleId: rule.id, alarmName, before: { count: 0, totalMs: 0 }, after: { count: 0, totalMs: 0 } };
      for (const r of rows.rows) {
        if (!ruleCovers(rule, r.integration_id || null, alarmName, r.severity || null)) continue;
        split.before.count += Number(r.before_count);
        split.before.totalMs += Number(r.before_ms ?? 0);
        split.after.count += Number(r.after_count);
        split.after.totalMs += Number(r.after_ms ?? 0);
      }
      splits.push(split);
    }
    return splits;
  }

  /**
   * The hosts most of an alarm's latest incidents in the period were on (at most 1,000 read: the
   * cost stays flat for an alarm that fired 100,000 times), with how many of them.
   */
  async typicalHost(integrationId: string, alarmName: string): Promise<{ hostname: string; count: number; of: number } | null> {
    const rows = await sql<{ host_key: string; count: number | string; of: number | string }>`select host_key, count(*) as count, sum(count(*)) over () as of
      from (select host_key from incidents ${indexed(this.dialect, 'incidents_resolved_alarm')}
        where ${this.resolvedWithin()} and alarm_name = ${alarmName} and integration_id = ${integrationId}
        order by resolved_at desc limit 1000) as latest
      group by host_key order by count(*) desc, host_key`.execute(this.db);
    const top = rows.rows.find((r) => r.host_key !== '');
    if (!top) return null;
    return { hostname: await this.hostnameOf(top.host_key), count: Number(top.count), of: Number(top.of) };
  }

  /**
   * The label names of the alarm's newest alert on the integration: the newest alert of the newest
   * of its latest LABEL_INCIDENTS incidents that has one (an imported incident has none), read by
   * primary key from the incident's row (migration 0032). The walk stays that short for an alarm
   * only ever imported: walking all its incidents took 0.8–1.2 s over a million (bench/incidents-analytics.js).
   */
  async newestLabelNames(integrationId: string, alarmName: string): Promise<string[]> {
    const index = indexed(this.dialect, 'incidents_tenant_alarm');
    const rows = await sql<{ labels: string }>`select alerts.labels from (select id, last_alert_id from incidents ${index}
        where tenant_id = ${this.tenantId} and alarm_name = ${alarmName} and integration_id = ${integrationId}
        order by id desc limit ${LABEL_INCIDENTS}) as latest
      join alerts on alerts.id = latest.last_alert_id
      where alerts.tenant_id = ${this.tenantId} order by latest.id desc limit 1`.execute(this.db);
    const alert = rows.rows[0];
    return alert ? Object.keys(JSON.parse(alert.labels) as Record<string, string>) : [];
  }

  /** The tenant's incidents resolved within the period (or the days given) and the filters: a condition every partial index takes. */
  private resolvedWithin(period: Period = this.query.period): RawBuilder<unknown> {
    const { integrationId, alarmName, severity, hostKey: key } = this.filter;
    const conditions = [
      sql`tenant_id = ${this.tenantId}`,
      sql`state = 'resolved'`,
      sql`resolved_at >= ${period.firstDay * DAY_MS}`,
      sql`resolved_at < ${period.endDay * DAY_MS}`,
      ...(integrationId === undefined ? [] : [sql`integration_id = ${integrationId}`]),
      ...(alarmName === undefined ? [] : [sql`alarm_name = ${alarmName}`]),
      ...(severity === undefined ? [] : [sql`severity = ${severity}`]),
      ...(key === undefined ? [] : [sql`host_key = ${key}`, ...this.hostDays(period, key)]),
    ];
    return sql.join(conditions, sql` and `);
  }

  /**
   * One host's incidents are read from the day-and-host index (migration 0041), a probe of (tenant, day, host) per
   * day of the period: the days as a list the index's own expression is looked up in. A blank host's (no host
   * named) are not in that index: the day index, which holds every resolved incident, is read for them.
   */
  private hostIndex(): 'incidents_resolved_day_host' | 'incidents_resolved_time' {
    return this.filter.hostKey === '' ? 'incidents_resolved_time' : 'incidents_resolved_day_host';
  }

  private hostDays(period: Period, key: string): Array<RawBuilder<unknown>> {
    if (key === '') return [sql`${sql.raw(DAY_SQL)} >= ${period.firstDay}`, sql`${sql.raw(DAY_SQL)} < ${period.endDay}`];
    const days = Array.from({ length: period.endDay - period.firstDay }, (_, i) => period.firstDay + i);
    const probes = this.dialect === 'postgres' ? sql`${sql.raw(DAY_SQL)} = any(cast(${days} as bigint[]))`
      : sql`${sql.raw(DAY_SQL)} in (select value from json_each(${JSON.stringify(days)}))`;
    return [sql`host_key <> ''`, probes];
  }
}

interface HostCountRow {
  host_key: string;
  count: number | string;
}

interface GroupRow {
  day: number | string;
  integration_id: string;
  alarm_name: string;
  severity: string;
  resolved: number | string;
  automated: number | string;
  total_ms: number | string;
  max_ms: number | string;
}

/** PostgreSQL gives sums of bigint as numeric, in text: numbers here, all well within 2^53. */
function groupOf(row: GroupRow): DayGroup {
  return {
    day: Number(row.day),
    integrationId: row.integration_id === '' ? null : row.integration_id,
    alarmName: row.alarm_name,
    severity: row.severity === '' ? null : row.severity,
    resolved: Number(row.resolved),
    automated: Number(row.automated),
    totalMs: Number(row.total_ms),
    maxMs: Number(row.max_ms),
  };
}
