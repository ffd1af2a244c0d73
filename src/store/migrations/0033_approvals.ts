import type { Kysely } from 'kysely';

/* eslint-disable @typescript-eslint/no-explicit-any */

/**
 * Issue 42: approvals before destructive fixes (docs/approvals.md). A rule's `approval` setting
 * (JSON, null: none asked); an execution's terms of approval copied when it was created (JSON
 * {role, timeoutSeconds, onTimeout}; null: it never waited) and when it was approved, which is
 * when the action limit counts it (limit-window.ts); who moved an execution, through which channel
 * and with which comment, on the transition a person caused (JSON; null: the service's own move).
 */
export async function up(db: Kysely<any>): Promise<void> {
  await db.schema.alterTable('rules').addColumn('approval', 'text').execute();
  await db.schema.alterTable('executions').addColumn('approval', 'text').execute();
  await db.schema.alterTable('executions').addColumn('approved_at', 'bigint').execute();
  await db.schema.alterTable('execution_transitions').addColumn('decided_by', 'text').execute();
  // The timeout sweep and the "awaiting approval" list read by state.
  await db.schema.createIndex('executions_awaiting').on('executions').columns(['state', 'expires_at']).where('state', '=', 'awaiting_approval').execute();
}

export async function down(db: Kysely<any>): Promise<void> {
  await db.schema.dropIndex('executions_awaiting').execute();
  await db.schema.alterTable('execution_transitions').dropColumn('decided_by').execute();
  await db.schema.alterTable('executions').dropColumn('approved_at').execute();
  await db.schema.alterTable('executions').dropColumn('approval').execute();
  await db.schema.alterTable('rules').dropColumn('approval').execute();
}
