import { EventEmitter } from 'node:events';
import type { StateChange } from './ledger.js';
import { isTerminal, type ExecutionState } from './states.js';

export type LiveEvent = { kind: 'output'; stream: 'stdout' | 'stderr'; chunk: string } | { kind: 'state'; state: ExecutionState };

// A running execution's output is held here (bounded) until its result is stored with it.
const MAX_BUFFERED_BYTES = 1024 * 1024;

/**
 * Live output and state changes of executions on this node, for streams to people watching.
 * Holds nothing durable: the stored execution is the record.
 */
export class LiveExecutions {
  private readonly emitter = new EventEmitter();
  private readonly buffers = new Map<string, { chunks: LiveEvent[]; bytes: number }>();

  constructor() {
    this.emitter.setMaxListeners(0);
  }

  output(executionId: string, stream: 'stdout' | 'stderr', chunk: string): void {
    const event: LiveEvent = { kind: 'output', stream, chunk };
    const buffer = this.buffers.get(executionId) ?? { chunks: [], bytes: 0 };
    if (buffer.bytes + chunk.length <= MAX_BUFFERED_BYTES) {
      buffer.chunks.push(event);
      buffer.bytes += chunk.length;
      this.buffers.set(executionId, buffer);
    }
    this.emitter.emit(executionId, event);
  }

  changed(changes: StateChange[]): void {
    for (const { executionId, state } of changes) {
      this.emitter.emit(executionId, { kind: 'state', state } satisfies LiveEvent);
      if (isTerminal(state)) this.buffers.delete(executionId);
    }
  }

  /** Output seen so far for a running execution on this node. */
  buffered(executionId: string): LiveEvent[] {
    return [...(this.buffers.get(executionId)?.chunks ?? [])];
  }

  subscribe(executionId: string, listener: (event: LiveEvent) => void): () => void {
    this.emitter.on(executionId, listener);
    return () => this.emitter.off(executionId, listener);
  }
}
