import type { FastifyBaseLogger } from 'fastify';
import { sql, type Kysely } from 'kysely';
import type { Dialect } from '../store/database.js';
import type { Database } from '../store/schema.js';
import { Statements } from '../store/statements.js';
import { IncidentBook, scopeOf } from './book.js';
import { lockAlarms, settingsOf } from './reads.js';
import { indexed } from './rollup.js';
import { incidentWrites } from './writes.js';

export interface QuietCloserDeps {
  db: Kysely<Database>;
  dialect: Dialect;
  logger: Pick<FastifyBaseLogger, 'info'>;
  /** How often a pass looks (10 s): a quiet period is counted in minutes. */
  intervalMs?: number;
  /** Incidents closed per transaction at most. */
  batchSize?: number;
}

/**
 * Closes the incidents webhook calls opened once their alarm has been quiet for the tenant's
 * period (a webhook has no `resolved`; docs/incidents.md): resolved when pitcrew last heard of
 * them, or when a fix of theirs ended after that. Run by every node's sweeper: on PostgreSQL each
 * pass takes the locks of the alarms it closes (the ingest's, incidents/reads.ts) and reads them
 * again under them, so a call arriving meanwhile on another node either comes first (the incident
 * is no longer quiet) or after (it opens the next incident); two nodes closing at once close once.
 */
export class QuietCloser {
  private lastRunAt = Number.NEGATIVE_INFINITY;
  private readonly statements: Statements;

  constructor(private readonly deps: QuietCloserDeps) {
    this.statements = new Statements(deps.dialect);
  }

  /** Called by every sweep: a pass every intervalMs, and at once again while a full batch was closed. */
  async run(now: number): Promise<void> {
    if (now - this.lastRunAt < (this.deps.intervalMs ?? 10_000)) return;
    const closed = await this.closeQuiet(now);
    this.lastRunAt = closed >= (this.deps.batchSize ?? 500) ? Number.NEGATIVE_INFINITY : now;
    if (closed > 0) this.deps.logger.info({ closed }, 'closed incidents whose webhook alarm was quiet for the tenant\'s period');
  }

  /** One pass; returns how many incidents it closed. */
  async closeQuiet(now: number): Promise<number> {
    const { db, dialect } = this.deps;
    // SQLite without statistics scanned every open incident (incidents_tenant_open) once the
    // integration index stopped holding open ones (migration 0042); the webhook's own are few.
    const index = indexed(dialect, 'incidents_open_webhook');
    const { rows: quiet } = await sql<{ id: string; tenant_id: string; incident_key: string }>`select incidents.id, incidents.tenant_id, incidents.incident_key
      from incidents ${index} join tenants on tenants.id = incidents.tenant_id
      where incidents.state = 'open' and incidents.integration_id is null and incidents.last_seen_at + tenants.incident_quiet_seconds * 1000 < ${now}
      limit ${this.deps.batchSize ?? 500}`.execute(db);
    if (quiet.length === 0) return 0;
    return db.transaction().execute(async (tx) => {
      if (dialect === 'postgres') await tx.executeQuery(lockAlarms(quiet.map((row) => scopeOf(row.tenant_id, null, row.incident_key))));
      const ids = quiet.map((row) => row.id);
      const rows = await tx.selectFrom('incidents').selectAll().where('id', 'in', ids).where('state', '=', 'open').execute();
      const tenants = [...new Set(rows.map((row) => row.tenant_id))];
      const settings = tenants.length === 0 ? [] : await tx.selectFrom('tenants').select(['id', 'incident_automation_seconds', 'incident_quiet_seconds']).where('id', 'in', tenants).execute();
      const book = new IncidentBook(rows, settingsOf(settings));
      const closed = rows.filter((row) => book.closeIfQuiet(row.id, now)).length;
      for (const query of incidentWrites(this.statements, dialect, book)) await tx.executeQuery(query);
      return closed;
    });
  }
}
