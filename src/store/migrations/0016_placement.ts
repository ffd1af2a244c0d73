import type { Kysely } from 'kysely';

/* eslint-disable @typescript-eslint/no-explicit-any */

/**
 * Issue 18, the rest of cron:
 * - executions.placement: the tags a one-host target picked from (JSON), so that a run whose host
 *   went offline before it started moves to another online host of them (executions/placement.ts);
 *   null for a run bound to its host.
 * - schedules.waiting_tick: with `overlap: queue`, the tick that waits for the rule's previous run
 *   to end (scheduler/scheduler.ts); at most one waits.
 */
export async function up(db: Kysely<any>): Promise<void> {
  await db.schema.alterTable('executions').addColumn('placement', 'text').execute();
  await db.schema.alterTable('schedules').addColumn('waiting_tick', 'bigint').execute();
}

export async function down(db: Kysely<any>): Promise<void> {
  await db.schema.alterTable('schedules').dropColumn('waiting_tick').execute();
  await db.schema.alterTable('executions').dropColumn('placement').execute();
}
