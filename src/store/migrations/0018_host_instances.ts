import type { Kysely } from 'kysely';

/* eslint-disable @typescript-eslint/no-explicit-any */

/**
 * Issue 19: a host can carry its cloud instance id (set through the API), so that a cloud action
 * on an alert that names a host acts on that host's instance (actions/cloud/kind.ts).
 */
export async function up(db: Kysely<any>): Promise<void> {
  await db.schema.alterTable('hosts').addColumn('cloud_instance_id', 'text').execute();
}

export async function down(db: Kysely<any>): Promise<void> {
  await db.schema.alterTable('hosts').dropColumn('cloud_instance_id').execute();
}
