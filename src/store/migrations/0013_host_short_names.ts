import { PostgresAdapter, sql, type Kysely } from 'kysely';

/* eslint-disable @typescript-eslint/no-explicit-any */

/**
 * Issue 17: monitoring tools name hosts with or without their domain ("web-1" where the agent
 * enrolled as "web-1.example.com", or the other way round). Each host keeps its name's first DNS
 * label (hostname_short), indexed, so the ingest transaction finds such a host without a scan.
 */
export async function up(db: Kysely<any>): Promise<void> {
  await db.schema.alterTable('hosts').addColumn('hostname_short', 'text', (c) => c.notNull().defaultTo('')).execute();
  // The same first label in both databases: the key before its first dot, the whole key without one.
  const dot = db.getExecutor().adapter instanceof PostgresAdapter ? sql`strpos(hostname_key, '.')` : sql`instr(hostname_key, '.')`;
  await sql`update hosts set hostname_short = case when ${dot} > 0 then substr(hostname_key, 1, ${dot} - 1) else hostname_key end`.execute(db);
  await db.schema.createIndex('hosts_tenant_short').on('hosts').columns(['tenant_id', 'hostname_short']).execute();
}

export async function down(db: Kysely<any>): Promise<void> {
  await db.schema.dropIndex('hosts_tenant_short').execute();
  await db.schema.alterTable('hosts').dropColumn('hostname_short').execute();
}
