import type { Kysely } from 'kysely';

/* eslint-disable @typescript-eslint/no-explicit-any */

/**
 * events_tenant (tenant_id, id) served no query: a tenant's events are always read by rule
 * (events_rule) or by id. Every event paid for it on insert, one b-tree more to update and its
 * pages rewritten into the WAL on each group commit (bench/README.md, ingest).
 */
export async function up(db: Kysely<any>): Promise<void> {
  await db.schema.dropIndex('events_tenant').ifExists().execute();
}

export async function down(db: Kysely<any>): Promise<void> {
  await db.schema.createIndex('events_tenant').on('events').columns(['tenant_id', 'id']).execute();
}
