import type { FastifyBaseLogger } from 'fastify';
import type { Kysely } from 'kysely';
import { hostKey, resolveTargets, type HostFacts } from '../engine/decide.js';
import { hostsByTenant, latestPick, type HostCandidate } from '../engine/host-facts.js';
import type { Database } from '../store/schema.js';
import type { ExecutionLedger } from './ledger.js';
import { preparedQuery } from '../store/prepared.js';

/** A queued run placed on one host of a tag target, whose host has no agent connected now. */
export interface StrandedRun {
  id: string;
  tenantId: string;
  fromHostId: string;
  fromHostname: string;
  /** The tags its target picks from (executions.placement). */
  tags: string[];
}

export interface Move {
  run: StrandedRun;
  to: HostFacts;
  /** When the host was picked: its last_picked_at. */
  at: number;
}

/** Runs looked at per sweep; the rest wait for the next sweep a second later. */
const PER_SWEEP = 500;

/**
 * Pure: where each stranded run goes, as a one-host target picks (engine/decide.ts): another
 * online host of its tags, the least recently picked; a run with none stays where it is and waits
 * for its host or its expiry. Runs moved in one call spread over the hosts as ticks do.
 */
export function planMoves(runs: readonly StrandedRun[], hosts: ReadonlyMap<string, HostFacts[]>, now: number): Move[] {
  const moves: Move[] = [];
  // Each pick later than the last, so that runs moved together take turns rather than tie (ingest/batch-writes.ts picked).
  const lastPick = new Map<string, number>();
  for (const run of runs) {
    const tenantHosts = hosts.get(run.tenantId) ?? [];
    const candidates = tenantHosts.filter((host) => host.id !== run.fromHostId);
    const picked = resolveTargets({ type: 'specific_tags', tags: run.tags }, { act: true, hostName: undefined }, candidates, 'one');
    if (typeof picked === 'string') continue;
    const to = picked[0]!;
    const at = Math.max(now, (lastPick.get(run.tenantId) ?? latestPick(tenantHosts)) + 1);
    lastPick.set(run.tenantId, at);
    to.lastPickedAt = at;
    moves.push({ run, to, at });
  }
  return moves;
}

/** Every sweep's read (built once: store/prepared.ts). */
const strandedRuns = preparedQuery((db) => db
  .selectFrom('executions as e')
  .innerJoin('hosts as h', 'h.id', 'e.host_id')
  .select(['e.id', 'e.tenant_id', 'e.host_id', 'e.placement', 'h.hostname'])
  .where('e.state', '=', 'queued')
  .where('e.held', '=', 0)
  .where('e.placement', 'is not', null)
  .where('h.session_id', 'is', null)
  .orderBy('e.id')
  .limit(PER_SWEEP));

/**
 * Keeps a one-host target's promise, "any one healthy host of the tags" (DESIGN.md §3): a run
 * placed on a host that went offline before the run started (its agent disconnected; a run the
 * agent had not started comes back to the queue) is moved to another online host of the same
 * tags. A run that started stays: it is never run twice. The move goes through the ledger, on
 * condition that the run is still queued on the host it leaves, so an agent that reconnects and
 * takes it, or another node moving it first, wins and nothing runs twice.
 */
export class Placement {
  constructor(private readonly deps: { db: Kysely<Database>; ledger: ExecutionLedger; logger: FastifyBaseLogger }) {}

  /** Moves what is stranded now; resolves with how many runs moved. */
  async run(now: number): Promise<number> {
    const stranded = await this.stranded();
    if (stranded.length === 0) return 0;
    const moves = planMoves(stranded, await this.hostsOf(stranded), now);
    let moved = 0;
    for (const { run, to, at } of moves) {
      const reason = `moved from ${run.fromHostname}, whose agent went offline before the run started, to ${to.hostname} (the target runs on any one online host of the tags ${run.tags.join(', ')})`;
      if (!(await this.deps.ledger.place({ id: run.id, fromHostId: run.fromHostId, to: { hostId: to.id, hostname: to.hostname, hostKey: hostKey(to.hostname) }, reason }))) continue;
      moved += 1;
      await this.deps.db.updateTable('hosts').set({ last_picked_at: at }).where('id', '=', to.id).execute();
    }
    if (moved > 0) this.deps.logger.info({ moved }, 'moved queued runs off hosts that went offline');
    return moved;
  }

  private async stranded(): Promise<StrandedRun[]> {
    const rows = await strandedRuns(this.deps.db);
    return rows.map((row) => ({ id: row.id, tenantId: row.tenant_id, fromHostId: row.host_id!, fromHostname: row.hostname, tags: JSON.parse(row.placement!) as string[] }));
  }

  /** The hosts of the tenants concerned that carry every tag of some stranded run. */
  private async hostsOf(runs: StrandedRun[]): Promise<Map<string, HostFacts[]>> {
    const tenants = [...new Set(runs.map((run) => run.tenantId))];
    const tags = [...new Set(runs.flatMap((run) => run.tags))];
    if (tags.length === 0) return new Map();
    const rows = await this.deps.db
      .selectFrom('hosts')
      .select(['id', 'tenant_id', 'hostname', 'tags', 'session_id', 'last_picked_at'])
      .where('tenant_id', 'in', tenants)
      .where('session_id', 'is not', null)
      .where('id', 'in', (eb) => eb.selectFrom('host_tags').select('host_id').where('tag', 'in', tags).where('tenant_id', 'in', tenants))
      .execute();
    return hostsByTenant(rows as HostCandidate[]);
  }
}
