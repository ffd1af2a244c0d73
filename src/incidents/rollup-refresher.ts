import type { FastifyBaseLogger } from 'fastify';
import { sql, type Kysely } from 'kysely';
import type { Dialect } from '../store/database.js';
import type { Database } from '../store/schema.js';
import { afterAnalyticsCalls, refreshIncidentDays, tenantsWithStaleDays } from './rollup.js';

export interface RollupRefresherDeps {
  db: Kysely<Database>;
  dialect: Dialect;
  logger: Pick<FastifyBaseLogger, 'info' | 'error'>;
  /** How often it looks for stale days (1 s): a dashboard's call then seldom finds any. */
  intervalMs?: number;
}

/**
 * Days recomputed per transaction. SQLite runs on the event loop (store/database.ts): a day of
 * 11,000 incidents took ~60 ms of CPU to recompute (~10 ms since migration 0034's day indexes, not
 * re-tuned: the bench's machine was too loaded to show a difference), so two days at a time keep requests and
 * heartbeats waiting well under a second. PostgreSQL runs apart, but a request for the tenant waits
 * on its lock: a week (78,000 incidents at a million over 90 days) is ~0.2 s (bench/README.md).
 */
const DAYS_PER_TRANSACTION: Record<Dialect, number> = { sqlite: 2, postgres: 7 };

/**
 * After a pass this large (an upgrade, a long history imported at once), PostgreSQL's statistics of
 * the rollups are refreshed at once rather than by autovacuum within minutes: without them it took
 * 160,000 host-day rows for 4 and sorted them on disk to sum them per host, 420-550 ms of the 90-day
 * analytics (auto_explain, bench/README.md); with them it hashes them in memory.
 */
const ANALYZE_AFTER_DAYS = 7;

/** How long a transaction waits for this process's analytics calls to end (rollup.ts afterAnalyticsCalls). */
const GIVE_WAY_TO_CALLS_MS = 2000;

/** Tenants looked at per pass; the others in the next. */
const TENANTS_PER_PASS = 100;

/**
 * After a pass, the next waits this many times as long as it took (at most MAX_REST_INTERVALS): the
 * background spends at most ~0.5 % of the process's time recomputing. Under a steady stream of
 * resolutions today is stale again at every pass, and a pass recomputes the day whole (~45 ms at
 * 60,000 incidents resolved that day): once a second, that was ~7 % of the alert ingest's time
 * (bench/alerts.js, fire+resolve; issue 38), and resting 50 times the pass still ~4 % of its
 * statements' time (session 30, bench/README.md). An analytics call still recomputes the stale
 * days it reads: today, under such a stream, whatever this loop does.
 */
const PASS_SPACING = 200;
/** A long pass (a million incidents landed at once) silences the background for at most this many of its intervals. */
const MAX_REST_INTERVALS = 10;

/**
 * Recomputes the incident rollups' stale days in the background, on every node (issue 38: the
 * analytics over a million incidents answer in under a second; recomputing 90 days inside the
 * request took 6.6 s on SQLite, 10.9 s on PostgreSQL). Each pass takes every tenant with stale
 * days and recomputes them a few days per transaction, the latest first, until none is left.
 * Two nodes at once: on PostgreSQL the one that holds the tenant's lock recomputes, the other
 * passes it by (rollup.ts); a request still recomputes what is left of its period, so the
 * analytics stay exact right after a change, whatever this loop has done.
 */
export class RollupRefresher {
  private timer: NodeJS.Timeout | undefined;
  private pass: Promise<void> | undefined;
  private stopping = false;
  /** performance.now() before which no pass starts (PASS_SPACING). */
  private restAt = 0;

  constructor(private readonly deps: RollupRefresherDeps) {}

  private get intervalMs(): number {
    return this.deps.intervalMs ?? 1000;
  }

  start(): void {
    this.timer = setInterval(() => this.tick(), this.intervalMs).unref();
  }

  /** Stops looking and waits for the pass under way. */
  async stop(): Promise<void> {
    this.stopping = true;
    clearInterval(this.timer);
    await this.pass;
  }

  /** A pass unless one is under way: a long one (a million incidents imported at once) is not started twice. */
  private tick(): void {
    if (this.pass !== undefined || this.stopping || performance.now() < this.restAt) return;
    const started = performance.now();
    this.pass = this.refreshAll()
      .then(() => undefined, (error: unknown) => this.deps.logger.error({ err: error }, 'recomputing the incident analytics\' stale days failed; the next pass tries again, and the analytics recompute them when read'))
      .finally(() => {
        this.pass = undefined;
        const ended = performance.now();
        this.restAt = ended + Math.min((ended - started) * PASS_SPACING, this.intervalMs * MAX_REST_INTERVALS);
      });
  }

  /** One pass; returns how many days it recomputed. */
  async refreshAll(): Promise<number> {
    const { db, dialect } = this.deps;
    let days = 0;
    for (const tenantId of await tenantsWithStaleDays(db, TENANTS_PER_PASS)) {
      for (;;) {
        await afterAnalyticsCalls(GIVE_WAY_TO_CALLS_MS);
        if (this.stopping) return days;
        const maxDays = DAYS_PER_TRANSACTION[dialect];
        const done = await refreshIncidentDays(db, dialect, tenantId, { maxDays, wait: false });
        days += done;
        // Fewer than asked: none was left (a day marked meanwhile is the next pass's), or another node holds the tenant.
        if (done < maxDays) break;
        // Between transactions, what else waits on the event loop (SQLite's statements hold it) goes first.
        await new Promise((resolve) => setImmediate(resolve));
      }
    }
    if (days >= ANALYZE_AFTER_DAYS && dialect === 'postgres') await sql`analyze incident_days, incident_host_days`.execute(db);
    if (days > 1) this.deps.logger.info({ days }, 'recomputed the incident analytics\' stale days');
    return days;
  }
}
