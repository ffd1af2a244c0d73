import type { CompiledQuery, Kysely } from 'kysely';
import { inBatchTransaction, type Committed } from '../store/batch.js';
import type { Durability } from '../store/durability.js';
import { GroupCommit } from '../store/group-commit.js';
import type { Database, HostRow } from '../store/schema.js';
import { preparedListStatement } from '../store/prepared.js';
import { Statements } from '../store/statements.js';
import type { Dialect } from '../store/database.js';
import { attachedRow, tagWrites, type AgentFacts } from './repository.js';

// Built once per size class of the batch: a group commit of hellos comes in every size up to 256.
const hostsById = preparedListStatement((db, ids) => db.selectFrom('hosts').selectAll().where('id', 'in', ids));

type SessionChange =
  | { kind: 'attach'; hostId: string; facts: AgentFacts; sessionId: string; nodeId: string }
  | { kind: 'detach'; hostId: string; sessionId: string };

/**
 * Which session, on which node, holds each host, written with group commit: the hellos (and
 * the disconnections) of many agents at once share transactions. One transaction per hello, on
 * SQLite with its fsync on the event loop, let a fleet reconnecting after a restart in at a few
 * hundred hellos a second on a busy disk (bench/fleet.js).
 */
export class HostSessions {
  private readonly queue: GroupCommit<SessionChange, void>;
  private readonly statements: Statements;

  constructor(
    private readonly db: Kysely<Database>,
    private readonly durability: Durability,
    dialect: Dialect,
  ) {
    this.statements = new Statements(dialect);
    this.queue = new GroupCommit((changes) => this.commit(changes), { maxBatch: 256, maxQueued: 100_000, name: 'agent sessions' });
  }

  /** Records what a connecting agent reports and that this session (on this node) now holds the host. */
  attach(hostId: string, facts: AgentFacts, session: { sessionId: string; nodeId: string }): Promise<void> {
    return this.queue.submit({ kind: 'attach', hostId, facts, ...session });
  }

  /** Marks the host offline, unless a newer session already took it over. */
  detach(hostId: string, sessionId: string): Promise<void> {
    return this.queue.submit({ kind: 'detach', hostId, sessionId });
  }

  drain(): Promise<void> {
    return this.queue.drain();
  }

  private async commit(changes: SessionChange[]): Promise<Committed<void[]>> {
    const now = Date.now();
    const attaching = [...new Set(changes.filter((c) => c.kind === 'attach').map((c) => c.hostId))];
    const { durable } = await inBatchTransaction(this.db, this.durability, async (tx) => {
      const reads = attaching.length > 0 ? [hostsById(this.db, attaching)] : [];
      const [found] = await tx.begin(reads);
      const rows = new Map((found?.rows as HostRow[] | undefined ?? []).map((row) => [row.id, row]));
      await tx.commit(changes.flatMap((change) => this.writes(change, rows, now)));
    });
    return { value: changes.map(() => undefined), durable };
  }

  /** In submission order; `rows` follows the attachments already written, for a host attached twice in one batch. */
  private writes(change: SessionChange, rows: Map<string, HostRow>, now: number): CompiledQuery[] {
    if (change.kind === 'detach') {
      return [this.db.updateTable('hosts').set({ session_id: null, node_id: null, last_seen_at: now }).where('id', '=', change.hostId).where('session_id', '=', change.sessionId).compile()];
    }
    const row = rows.get(change.hostId);
    if (!row) return [];
    const updated = attachedRow(row, change.facts, change, now);
    rows.set(row.id, updated);
    const changed = changedColumns(row, updated);
    // Nothing changed: the same session's hello twice in one batch.
    // Its text made once per set of columns (Statements): Kysely built and compiled each anew, 0.1 ms of a hello's CPU.
    const writes = Object.keys(changed).length === 0 ? [] : [this.statements.updateById('hosts', changed, row.id)];
    return updated.tags === row.tags ? writes : [...writes, ...tagWrites(this.db, updated)];
  }
}

/**
 * The columns a hello changed, the only ones its update sets: usually the session, the node and
 * the last-seen time. Setting the whole row made SQLite rewrite each of the host's four indexes
 * (id, token, name, short name) for every hello: 10,000 hellos updated in 187-215 ms of CPU with
 * 5.4 MB of WAL, against 50-99 ms and 3.2 MB with the changed columns only (scratch test, batches
 * of 256 as here).
 */
function changedColumns(before: HostRow, after: HostRow): Partial<HostRow> {
  const changed: Partial<HostRow> = {};
  for (const column of Object.keys(after) as Array<keyof HostRow>) {
    if (after[column] !== before[column]) Object.assign(changed, { [column]: after[column] });
  }
  return changed;
}
