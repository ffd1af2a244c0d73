import { Cron } from 'croner';
import type { Kysely } from 'kysely';

/* eslint-disable @typescript-eslint/no-explicit-any */

/**
 * Issue 18: each enabled cron rule's next tick, kept beside the rule (rules/schedules.ts) so that
 * every node's scheduler finds what is due by index, and claims a tick by moving it on (a
 * compare-and-set on next_at: one node wins). Rules made before this get their next tick from now.
 * Hosts remember when a one-host target last picked them (hosts.last_picked_at).
 */
export async function up(db: Kysely<any>): Promise<void> {
  await db.schema
    .createTable('schedules')
    .addColumn('rule_id', 'text', (c) => c.primaryKey())
    .addColumn('tenant_id', 'text', (c) => c.notNull())
    .addColumn('next_at', 'bigint', (c) => c.notNull())
    .addColumn('last_tick_at', 'bigint')
    .addColumn('updated_at', 'bigint', (c) => c.notNull())
    .execute();
  await db.schema.createIndex('schedules_next').on('schedules').columns(['next_at']).execute();
  // A tag target that picks one host takes the least recently picked of the online ones.
  await db.schema.alterTable('hosts').addColumn('last_picked_at', 'bigint').execute();
  const now = Date.now();
  const rules = await db.selectFrom('rules').select(['id', 'tenant_id', 'trigger']).where('trigger_type', '=', 'cron').where('enabled', '=', 1).where('deleted_at', 'is', null).execute();
  for (const rule of rules as Array<{ id: string; tenant_id: string; trigger: string }>) {
    const trigger = JSON.parse(rule.trigger) as { schedule: string; timezone?: string };
    const next = new Cron(trigger.schedule, { paused: true, timezone: trigger.timezone ?? 'UTC' }).nextRun(new Date(now));
    if (next) await db.insertInto('schedules').values({ rule_id: rule.id, tenant_id: rule.tenant_id, next_at: next.getTime(), last_tick_at: null, updated_at: now }).execute();
  }
}

export async function down(db: Kysely<any>): Promise<void> {
  await db.schema.alterTable('hosts').dropColumn('last_picked_at').execute();
  await db.schema.dropTable('schedules').execute();
}
