import type { Kysely } from 'kysely';

/* eslint-disable @typescript-eslint/no-explicit-any */

/**
 * Issue 20: rules run stored runbooks and files of git repositories. `rules.runbook_id` and
 * `rules.repository_id` find the rules that follow a runbook when it is saved, and those that keep
 * a runbook or a repository from being deleted. `executions.awaiting_runbook` is 1 while a run's
 * script is still to be read from its git repository: it is held from dispatch until then.
 */
export async function up(db: Kysely<any>): Promise<void> {
  await db.schema.alterTable('rules').addColumn('runbook_id', 'text').execute();
  await db.schema.alterTable('rules').addColumn('repository_id', 'text').execute();
  await db.schema.createIndex('rules_runbook').on('rules').columns(['runbook_id']).execute();
  await db.schema.createIndex('rules_repository').on('rules').columns(['repository_id']).execute();
  await db.schema.alterTable('executions').addColumn('awaiting_runbook', 'integer', (c) => c.notNull().defaultTo(0)).execute();
}

export async function down(db: Kysely<any>): Promise<void> {
  await db.schema.alterTable('executions').dropColumn('awaiting_runbook').execute();
  await db.schema.dropIndex('rules_repository').execute();
  await db.schema.dropIndex('rules_runbook').execute();
  await db.schema.alterTable('rules').dropColumn('repository_id').execute();
  await db.schema.alterTable('rules').dropColumn('runbook_id').execute();
}
