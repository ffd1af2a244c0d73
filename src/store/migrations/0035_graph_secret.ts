import type { Kysely } from 'kysely';

/* eslint-disable @typescript-eslint/no-explicit-any */

/**
 * Issue 39: the credential an integration's graphs are read with (integrations/graph-secret.ts),
 * sealed like its other secrets: a Grafana service account token, which has no other place (Grafana
 * has no import), or Prometheus's own bearer token or basic login when it differs from the import's.
 */
export async function up(db: Kysely<any>): Promise<void> {
  await db.schema.alterTable('integrations').addColumn('graph_secret', 'text').execute();
}

export async function down(db: Kysely<any>): Promise<void> {
  await db.schema.alterTable('integrations').dropColumn('graph_secret').execute();
}
