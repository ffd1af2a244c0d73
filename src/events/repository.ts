import type { Kysely } from 'kysely';
import { notFound } from '../errors/catalogue.js';
import type { PageRequest } from '../store/pagination.js';
import type { Database, EventRow } from '../store/schema.js';

type Db = Kysely<Database>;

/** A rule's events, newest first. */
export async function listRuleEvents(db: Db, tenantId: string, ruleId: string, outcome: string | undefined, page: PageRequest): Promise<EventRow[]> {
  let query = db.selectFrom('events').selectAll().where('tenant_id', '=', tenantId).where('rule_id', '=', ruleId);
  if (outcome) query = query.where('outcome', '=', outcome);
  if (page.after) query = query.where('id', '<', page.after);
  return query.orderBy('id', 'desc').limit(page.limit + 1).execute();
}

export async function getEvent(db: Db, tenantId: string, id: string): Promise<EventRow> {
  const row = await db.selectFrom('events').selectAll().where('id', '=', id).where('tenant_id', '=', tenantId).executeTakeFirst();
  if (!row) throw notFound('event', id);
  return row;
}

/** The environments of a rule's newest events (no payloads: they may be large), newest first. */
export async function recentEventEnvs(db: Db, tenantId: string, ruleId: string, limit: number): Promise<Array<{ id: string; env: Record<string, string> }>> {
  const rows = await db.selectFrom('events').select(['id', 'env']).where('tenant_id', '=', tenantId).where('rule_id', '=', ruleId).orderBy('id', 'desc').limit(limit).execute();
  return rows.map((row) => ({ id: row.id, env: JSON.parse(row.env) as Record<string, string> }));
}
