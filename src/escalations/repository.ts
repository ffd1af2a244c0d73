import type { Kysely } from 'kysely';
import { hostKey } from '../engine/decide.js';
import { notFound } from '../errors/catalogue.js';
import type { PageRequest } from '../store/pagination.js';
import type { Database, EscalationRow } from '../store/schema.js';

type Db = Kysely<Database>;

/** pending: recorded, not told yet; notified: handed to the notifier (notify/escalation-relay.ts). */
export const ESCALATION_STATES = ['pending', 'notified'] as const;

export interface EscalationFilter {
  ruleId?: string;
  hostname?: string;
  state?: string;
}

/** Newest first. */
export async function listEscalations(db: Db, tenantId: string, filter: EscalationFilter, page: PageRequest): Promise<EscalationRow[]> {
  let query = db.selectFrom('escalations').selectAll().where('tenant_id', '=', tenantId);
  if (filter.ruleId) query = query.where('rule_id', '=', filter.ruleId);
  if (filter.hostname) query = query.where('host_key', '=', hostKey(filter.hostname));
  if (filter.state) query = query.where('state', '=', filter.state);
  if (page.after) query = query.where('id', '<', page.after);
  return query.orderBy('id', 'desc').limit(page.limit + 1).execute();
}

export async function getEscalation(db: Db, tenantId: string, id: string): Promise<EscalationRow> {
  const row = await db.selectFrom('escalations').selectAll().where('id', '=', id).where('tenant_id', '=', tenantId).executeTakeFirst();
  if (!row) throw notFound('escalation', id);
  return row;
}

/** The escalations of a rule whose window is still open, one per host at most. */
export async function openEscalations(db: Db, ruleId: string, now: number): Promise<EscalationRow[]> {
  return db.selectFrom('escalations').selectAll().where('rule_id', '=', ruleId).where('window_end', '>', now).orderBy('window_start').execute();
}
