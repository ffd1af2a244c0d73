import type { Kysely } from 'kysely';
import type { Database } from '../store/schema.js';
import { preparedListQuery } from '../store/prepared.js';
import { TurnLoader } from '../store/turn-loader.js';

export interface HeldExecution {
  id: string;
  state: string;
}

export interface OwedWork {
  /** The host has queued work to claim (the ledger's claim reads which). */
  queued: boolean;
  /** Executions sent to the host whose cancel is still owed. */
  cancels: string[];
}

const activeOfHosts = preparedListQuery((db, hostIds) => db.selectFrom('executions').select(['id', 'host_id', 'state'])
  .where('host_id', 'in', hostIds).where('state', 'in', ['dispatched', 'running']));
const owedToHosts = preparedListQuery((db, hostIds) => db.selectFrom('executions').select(['id', 'host_id', 'state'])
  .where('host_id', 'in', hostIds).where('state', 'in', ['queued', 'dispatched', 'running'])
  .where((eb) => eb.or([eb.and([eb('state', '=', 'queued'), eb('held', '=', 0)]), eb('cancel_requested_at', 'is not', null)])));

/**
 * What a hello reads, many hosts' at once: the hellos arriving in one turn of the event loop
 * share each statement (TurnLoader) instead of running one each. The lists name the states
 * too, so each host's rows come from the (host_id, state) index, never its whole history.
 */
export class HelloReads {
  private readonly active: TurnLoader<string, HeldExecution>;
  private readonly owed: TurnLoader<string, HeldExecution>;

  constructor(db: Kysely<Database>) {
    this.active = new TurnLoader(async (hostIds) => byHost(await activeOfHosts(db, hostIds)));
    this.owed = new TurnLoader(async (hostIds) => byHost(await owedToHosts(db, hostIds)));
  }

  /** The host's executions the service holds as sent to it (dispatched or running). */
  activeOf(hostId: string): Promise<HeldExecution[]> {
    return this.active.load(hostId);
  }

  /** Whether the host has queued work, and the cancels owed to it. */
  async owedTo(hostId: string): Promise<OwedWork> {
    const rows = await this.owed.load(hostId);
    return { queued: rows.some((row) => row.state === 'queued'), cancels: rows.filter((row) => row.state !== 'queued').map((row) => row.id) };
  }
}

function byHost(rows: Array<{ id: string; host_id: string | null; state: string }>): Array<[string, HeldExecution]> {
  return rows.map((row) => [row.host_id!, { id: row.id, state: row.state }]);
}
