import type { LiveExecutions, SequencedOutput } from '../executions/live.js';

/** How often a node with a stream open asks again; the holding node stops relaying past 3 times this. */
export const WATCH_RENEW_MS = 5000;

export type LiveNotice =
  | { kind: 'watch'; id: string; hostId: string; from: number }
  | ({ kind: 'output'; id: string } & SequencedOutput);

/**
 * Live output across service nodes (DESIGN.md §4: agents connect to any node, people to any
 * other). A node streaming an execution whose agent is connected elsewhere announces a watch,
 * again every few seconds while the stream is open; the node holding the agent then relays the
 * output it has buffered from the piece asked for, and every piece after, until the watches stop.
 * Pieces carry their sequence number, so the watching node passes each on once and in order.
 * Nothing here is durable: the stored execution, sent when the stream ends, is the record.
 */
export class LiveRelay {
  private readonly watched = new Map<string, number>();

  constructor(
    private readonly live: LiveExecutions,
    /** Sends a notice to every node; undefined on a single node (SQLite), where there is nothing to relay. */
    private readonly announce: ((notice: LiveNotice) => void) | undefined,
    private readonly holdsHost: (hostId: string) => boolean,
    private readonly clock: () => number = Date.now,
  ) {}

  /** A stream here watches an execution: returns how to stop. Nothing to do if its agent is here. */
  watch(executionId: string, hostId: string): () => void {
    const announce = this.announce;
    if (!announce || this.holdsHost(hostId)) return () => undefined;
    this.live.expectRemote(executionId);
    const ask = () => announce({ kind: 'watch', id: executionId, hostId, from: this.live.remoteNext(executionId) });
    ask();
    const timer = setInterval(ask, WATCH_RENEW_MS);
    return () => clearInterval(timer);
  }

  /** Another node's notice. */
  received(notice: LiveNotice): void {
    if (notice.kind === 'output') {
      this.live.remoteOutput(notice.id, { seq: notice.seq, stream: notice.stream, chunk: notice.chunk });
      return;
    }
    if (!this.holdsHost(notice.hostId)) return;
    const now = this.clock();
    for (const [id, until] of this.watched) if (until < now) this.watched.delete(id);
    this.watched.set(notice.id, now + 3 * WATCH_RENEW_MS);
    for (const piece of this.live.since(notice.id, notice.from)) this.announce?.({ kind: 'output', id: notice.id, ...piece });
  }

  /** Output of a run held here (LiveExecutions' relay): sent on while another node watches. */
  relay(executionId: string, pieces: SequencedOutput[]): void {
    const until = this.watched.get(executionId);
    if (until === undefined) return;
    if (until < this.clock()) {
      this.watched.delete(executionId);
      return;
    }
    for (const piece of pieces) this.announce?.({ kind: 'output', id: executionId, ...piece });
  }
}
