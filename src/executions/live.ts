import { EventEmitter } from 'node:events';
import type { StateChange } from './ledger.js';
import { isTerminal, type ExecutionState } from './states.js';

export type LiveEvent = { kind: 'output'; stream: 'stdout' | 'stderr'; chunk: string } | { kind: 'state'; state: ExecutionState };

/** An output chunk with its place in the execution's output on the node that holds the run. */
export interface SequencedOutput {
  seq: number;
  stream: 'stdout' | 'stderr';
  chunk: string;
}

// A running execution's output is held here (bounded) until its result is stored with it.
const MAX_BUFFERED_BYTES = 1024 * 1024;
/** Chunks are cut to this many characters: a piece must fit a PostgreSQL NOTIFY (8000 bytes) as JSON. */
export const MAX_CHUNK_CHARS = 1000;
/** Out-of-order pieces from another node held while an earlier one is missing. */
const MAX_PENDING = 1000;

interface OutputBuffer {
  chunks: SequencedOutput[];
  bytes: number;
  next: number;
}

/**
 * Live output and state changes of executions, for streams to people watching. Output comes from
 * the agents connected to this node (`output`), or, for a stream on this node whose agent is on
 * another, from that node in sequence (`remoteOutput`, cluster/live-relay.ts). Holds nothing
 * durable: the stored execution is the record.
 */
export class LiveExecutions {
  private readonly emitter = new EventEmitter();
  private readonly local = new Map<string, OutputBuffer>();
  private readonly remote = new Map<string, OutputBuffer & { pending: Map<number, SequencedOutput> }>();

  constructor(private readonly relay: (executionId: string, output: SequencedOutput[]) => void = () => undefined) {
    this.emitter.setMaxListeners(0);
  }

  /** Output from an agent connected here. */
  output(executionId: string, stream: 'stdout' | 'stderr', chunk: string): void {
    const buffer = this.local.get(executionId) ?? { chunks: [], bytes: 0, next: 0 };
    this.local.set(executionId, buffer);
    const pieces: SequencedOutput[] = [];
    for (let at = 0; at < chunk.length; at += MAX_CHUNK_CHARS) {
      const piece = { seq: buffer.next++, stream, chunk: chunk.slice(at, at + MAX_CHUNK_CHARS) };
      keep(buffer, piece);
      pieces.push(piece);
      this.emit(executionId, piece);
    }
    this.relay(executionId, pieces);
  }

  /** Output of a run held here, from `from` on, as far as it is still buffered. */
  since(executionId: string, from: number): SequencedOutput[] {
    return (this.local.get(executionId)?.chunks ?? []).filter((c) => c.seq >= from);
  }

  /** A stream here watches an execution whose agent is on another node: its pieces are expected. */
  expectRemote(executionId: string): void {
    if (!this.remote.has(executionId)) this.remote.set(executionId, { chunks: [], bytes: 0, next: 0, pending: new Map() });
  }

  /** The next piece a watched remote execution waits for (what to ask the other node for). */
  remoteNext(executionId: string): number {
    return this.remote.get(executionId)?.next ?? 0;
  }

  /** A piece from the node that holds the run: passed on in order, each once. */
  remoteOutput(executionId: string, piece: SequencedOutput): void {
    const buffer = this.remote.get(executionId);
    if (!buffer || piece.seq < buffer.next) return;
    if (piece.seq > buffer.next) {
      if (buffer.pending.size < MAX_PENDING) buffer.pending.set(piece.seq, piece);
      return;
    }
    for (let next: SequencedOutput | undefined = piece; next; next = buffer.pending.get(buffer.next)) {
      buffer.pending.delete(next.seq);
      buffer.next = next.seq + 1;
      keep(buffer, next);
      this.emit(executionId, next);
    }
  }

  changed(changes: StateChange[]): void {
    for (const { executionId, state } of changes) {
      this.emitter.emit(executionId, { kind: 'state', state } satisfies LiveEvent);
      if (isTerminal(state)) this.local.delete(executionId);
    }
  }

  /** Output seen so far for a running execution. */
  buffered(executionId: string): LiveEvent[] {
    const buffer = this.local.get(executionId) ?? this.remote.get(executionId);
    return (buffer?.chunks ?? []).map(({ stream, chunk }) => ({ kind: 'output', stream, chunk }));
  }

  subscribe(executionId: string, listener: (event: LiveEvent) => void): () => void {
    this.emitter.on(executionId, listener);
    return () => {
      this.emitter.off(executionId, listener);
      // Another node's pieces are kept only while someone here watches.
      if (this.emitter.listenerCount(executionId) === 0) this.remote.delete(executionId);
    };
  }

  private emit(executionId: string, { stream, chunk }: SequencedOutput): void {
    this.emitter.emit(executionId, { kind: 'output', stream, chunk } satisfies LiveEvent);
  }
}

/** Buffers a piece for streams that open later, up to MAX_BUFFERED_BYTES per execution. */
function keep(buffer: OutputBuffer, piece: SequencedOutput): void {
  if (buffer.bytes + piece.chunk.length > MAX_BUFFERED_BYTES) return;
  buffer.chunks.push(piece);
  buffer.bytes += piece.chunk.length;
}
