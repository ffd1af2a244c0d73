import { CompiledQuery, type Kysely } from 'kysely';
import { TERMINAL_STATES } from '../executions/states.js';
import type { Database } from '../store/schema.js';
import { chunksWithin, MAX_PARAMETERS, type Statements } from '../store/statements.js';
import { enqueue, routingOf, type TenantRouting } from './outbox.js';
import { route } from './routing.js';
import { listedOf, runNotification, type DescribeAction } from './run-notification.js';
import { activeOf, graphNote, readyToReport, snapshotRefs, type SnapshotLinking } from './run-graphs.js';
import { preparedQuery } from '../store/prepared.js';

const GROUPS_PER_PASS = 200;

/**
 * Statements the execution ledger adds to the transaction that ends executions: one pending row
 * per execution that reached a terminal state. Written in the same transaction rather than from
 * `onChange` after it, so a result and the duty to report it are committed together: a crash
 * between the two cannot lose a notification, and a rolled-back change leaves none behind. The
 * cost is one INSERT … SELECT per batch that ends executions, written as text (store/statements.ts:
 * Kysely's build took ~60 µs per batch). A tenant without a channel that could hear a result gets
 * no rows (the collector would only delete them: see `unheard`).
 */
export function pendingWrites(statements: Statements, transitions: ReadonlyArray<{ execution_id: string; to_state: string }>, at: number): CompiledQuery[] {
  const ended = transitions.filter((t) => (TERMINAL_STATES as readonly string[]).includes(t.to_state)).map((t) => t.execution_id);
  // A fan-out stopped after maxErrors ends every host's execution at once: as many statements as it takes.
  return statements.inLists(ended, 1).map((some) => {
    const text = 'insert into "notify_pending" ("execution_id", "event_id", "tenant_id", "at") '
      + `select "id", "event_id", "tenant_id", ${statements.list(1)} as "at" from "executions" where "id" in (${statements.list(some.length, 1)}) `
      + 'and exists (select "notify_channels"."id" from "notify_channels" where "notify_channels"."tenant_id" = "executions"."tenant_id" and "notify_channels"."mode" != \'disabled\')';
    return CompiledQuery.raw(text, [at, ...some]);
  });
}

/**
 * Turns ended executions into one message per fan-out run: an event's executions are reported
 * together once none is active, or after `groupWaitMs` with the ones still running counted as such
 * (those that end later get a message of their own).
 */
export class RunCollector {
  constructor(
    private readonly db: Kysely<Database>,
    private readonly linking: SnapshotLinking,
    private readonly groupWaitMs: number,
    private readonly describe: DescribeAction,
  ) {}

  /** One pass; returns how many messages it wrote. */
  async collect(now = Date.now()): Promise<number> {
    const { db } = this;
    const groups = await pendingGroups(db);
    if (groups.length === 0) return 0;
    const active = await activeOf(db, groups.map((g) => g.event_id));
    const ready = groups.filter((g) => readyToReport(g.event_id, Number(g.first_at), active, this.groupWaitMs, now));
    if (ready.length === 0) return 0;
    const routing = await routingOf(db, [...new Set(ready.map((g) => g.tenant_id))]);
    // A tenant with no channel that could hear a result has nothing to build: its rows just go.
    const unheard = ready.filter((g) => !routing.get(g.tenant_id)!.channels.some((c) => c.mode !== 'disabled')).map((g) => g.event_id);
    if (unheard.length > 0) await db.deleteFrom('notify_pending').where('event_id', 'in', unheard).where('at', '<=', now).execute();
    let written = 0;
    for (const group of ready) {
      if (unheard.includes(group.event_id)) continue;
      if (await this.collectEvent(group.event_id, routing.get(group.tenant_id)!, now)) written += 1;
    }
    return written;
  }

  private async collectEvent(eventId: string, routing: TenantRouting, now: number): Promise<boolean> {
    return this.db.transaction().execute(async (tx) => {
      // A few columns of each: a fan-out over a fleet is thousands of executions, each with its output.
      const all = await tx.selectFrom('executions').select(['id', 'state', 'hostname', 'companion', 'reason']).where('event_id', '=', eventId).orderBy('id').execute();
      const ended = all.filter((e) => (TERMINAL_STATES as readonly string[]).includes(e.state)).map((e) => e.id);
      if (ended.length === 0) return false;
      // The delete is the claim: a node that comes second (PostgreSQL waits on the rows) gets none.
      const claimed: Array<{ execution_id: string }> = [];
      // A fan-out over a fleet ends thousands at once; the lower of the databases' limits fits both.
      for (const some of chunksWithin(ended, MAX_PARAMETERS.sqlite - 1)) {
        for (const row of await tx.deleteFrom('notify_pending').where('event_id', '=', eventId).where('execution_id', 'in', some).returning('execution_id').execute()) claimed.push(row);
      }
      if (claimed.length === 0) return false;
      const event = await tx.selectFrom('events').selectAll().where('id', '=', eventId).executeTakeFirstOrThrow();
      const rule = await tx.selectFrom('rules').select(['id', 'name']).where('id', '=', event.rule_id).executeTakeFirstOrThrow();
      const ids = new Set(claimed.map((c) => c.execution_id));
      // A fix's message is about the fix: its companion capture shows as pictures, or as a note of why
      // there are none. The capture's own message goes only when it ended after the fix's was sent.
      const fixes = all.filter((e) => Number(e.companion) === 0);
      const companions = all.filter((e) => Number(e.companion) === 1);
      const aboutFixes = fixes.some((e) => ids.has(e.id));
      const members = aboutFixes ? fixes : companions;
      const listed = await tx.selectFrom('executions').selectAll().where('id', 'in', listedOf(members, ids)).execute();
      const snapshots = await snapshotRefs(tx, event.tenant_id, eventId, this.linking, now);
      const note = aboutFixes ? graphNote(companions, snapshots.length) : undefined;
      const notification = { ...runNotification(rule, event, members, ids, listed, this.linking.links, this.describe), ...(snapshots.length > 0 ? { snapshots } : {}), ...(note ? { graphNote: note } : {}) };
      const targets = route({ kind: 'run', severity: notification.severity, ruleId: rule.id }, routing.channels, routing.contacts);
      const first = [...ids].sort()[0]!;
      await enqueue(tx, { tenantId: event.tenant_id, dedupeKey: `run:${eventId}:${first}`, ruleId: rule.id, notification }, targets, now);
      return true;
    });
  }
}

/** Read by every notifier pass (built once: store/prepared.ts). */
const pendingGroups = preparedQuery((db) => db
  .selectFrom('notify_pending')
  .select(['event_id', 'tenant_id'])
  .select((eb) => eb.fn.min('at').as('first_at'))
  .groupBy(['event_id', 'tenant_id'])
  .orderBy('first_at')
  .limit(GROUPS_PER_PASS));
