import type { Kysely } from 'kysely';
import { serviceRunKey } from '../../engine/decide.js';
import { heldReason } from '../../executions/fanout.js';
import { countPerLimitKey, executionsInWindow, lockRules } from '../../executions/limit-window.js';
import { queuedInserts, queuedRow } from '../../executions/repository.js';
import type { RunEnd } from '../../executions/service-executor.js';
import type { Dialect } from '../../store/database.js';
import { newId } from '../../store/ids.js';
import type { Database, ExecutionRow } from '../../store/schema.js';
import { Statements } from '../../store/statements.js';
import { taggedWords, type CloudSpec } from './kind.js';

/**
 * The most instances one tag filter acts on. A filter that matches more is refused whole: a
 * too-wide tag (a typo, a tag the whole account carries) must not stop or terminate a fleet.
 */
export const MAX_TAGGED = 500;

/** An instance the tag filter found and the action limit kept from being acted on again. */
interface AtLimit {
  id: string;
  used: number;
}

/**
 * The run of a tag filter (kind.ts: the rule's `instances: {tags}`), once the provider listed the
 * instances that carry the tags now: one execution queued per instance, on the same event, each
 * within the action limit per instance as a run named by the payload is (on PostgreSQL under the
 * rule's lock, as ingest counts: two nodes never both fill the same instance's last place). The
 * filter's own run ends with what it queued in words; the instances' runs follow on their own.
 */
export async function queueTagged(db: Kysely<Database>, dialect: Dialect, resolver: ExecutionRow, spec: CloudSpec, found: readonly string[]): Promise<RunEnd> {
  const filter = `${taggedWords(spec.provider, spec.tags ?? {})}${spec.region ? ` in ${spec.region}` : ''}`;
  if (found.length === 0) return { state: 'failed', reason: `no ${filter}: nothing to ${spec.operation}` };
  if (found.length > MAX_TAGGED) return { state: 'failed', reason: `${found.length} ${filter}, more than the ${MAX_TAGGED} one tag filter acts on: none was called; narrow the tags` };
  const { queued, atLimit } = await db.transaction().execute(async (tx) => {
    const now = Date.now();
    const limit = spec.actionLimit ?? null;
    if (limit && dialect === 'postgres') await tx.executeQuery(lockRules(tx, [resolver.rule_id]));
    const counted = limit ? countPerLimitKey(await executionsInWindow(tx, resolver.rule_id, now - limit.windowSeconds * 1000).execute()) : new Map();
    const allowed: string[] = [];
    const refused: AtLimit[] = [];
    for (const id of found) {
      const used = counted.get(serviceRunKey(id))?.used ?? 0;
      if (limit && used >= limit.max) refused.push({ id, used });
      else allowed.push(id);
    }
    const rows = allowed.map((id, i) => instanceRow(resolver, spec, id, now, i >= (spec.fanout?.maxConcurrency ?? Infinity)));
    for (const query of queuedInserts(new Statements(dialect), rows, now)) await tx.executeQuery(query);
    return { queued: allowed, atLimit: refused };
  });
  const limited = atLimit.length === 0 ? '' : `; at the action limit (max ${spec.actionLimit!.max} within ${spec.actionLimit!.windowSeconds} s), not called again: ${atLimit.map((a) => a.id).join(', ')}`;
  const ran = queued.length === 0 ? 'none queued' : `${spec.operation} queued for ${queued.join(', ')} (one execution each, on this event)`;
  return { state: 'succeeded', reason: `${found.length} ${filter}: ${ran}${limited}` };
}

/**
 * One instance's execution: the filter's spec, for that instance alone, expiring as the filter's
 * did, in the action's fan-out (held past maxConcurrency, released as the others end).
 */
function instanceRow(resolver: ExecutionRow, spec: CloudSpec, instanceId: string, now: number, held: boolean) {
  const { tags: _tags, actionLimit: _limit, fanout, ...rest } = spec;
  const ids = { id: newId(now), tenantId: resolver.tenant_id, ruleId: resolver.rule_id, eventId: resolver.event_id };
  return {
    ...queuedRow(ids, { hostId: null, hostname: instanceId }, { ...rest, instanceId }, now, (resolver.expires_at - resolver.queued_at) / 1000),
    held: held ? 1 : 0,
    reason: held ? heldReason(fanout!.maxConcurrency!, 'instance') : null,
    fanout_max_concurrency: fanout?.maxConcurrency ?? null,
    fanout_max_errors: fanout?.maxErrors ?? null,
  };
}
