import { describe, expect, it } from 'vitest';
import { LiveExecutions, MAX_CHUNK_CHARS, type LiveEvent, type SequencedOutput } from './live.js';

const piece = (seq: number, chunk: string): SequencedOutput => ({ seq, stream: 'stdout', chunk });
const chunks = (events: LiveEvent[]) => events.map((e) => (e.kind === 'output' ? e.chunk : `[${e.state}]`));

describe('LiveExecutions', () => {
  it('numbers the output of a run held here, cut into pieces a NOTIFY can carry, and relays them', () => {
    const relayed: SequencedOutput[] = [];
    const live = new LiveExecutions((_id, pieces) => relayed.push(...pieces));
    live.output('e1', 'stdout', 'a'.repeat(MAX_CHUNK_CHARS + 5));
    live.output('e1', 'stderr', 'oops');
    expect(relayed.map((p) => [p.seq, p.stream, p.chunk.length])).toEqual([[0, 'stdout', MAX_CHUNK_CHARS], [1, 'stdout', 5], [2, 'stderr', 4]]);
    expect(live.since('e1', 2)).toEqual([{ seq: 2, stream: 'stderr', chunk: 'oops' }]);
    expect(live.since('e1', 0).length > 0).toBe(true);
    live.changed([{ executionId: 'e1', state: 'succeeded' }]);
    expect(live.since('e1', 0).length > 0).toBe(false);
  });

  it('passes another node\'s pieces on once each and in order, whatever order they come in', () => {
    const live = new LiveExecutions();
    const seen: LiveEvent[] = [];
    live.expectRemote('e2');
    const stop = live.subscribe('e2', (e) => seen.push(e));
    live.remoteOutput('e2', piece(1, 'b'));
    live.remoteOutput('e2', piece(0, 'a'));
    live.remoteOutput('e2', piece(0, 'a'));
    live.remoteOutput('e2', piece(3, 'd'));
    live.remoteOutput('e2', piece(2, 'c'));
    live.remoteOutput('e2', piece(1, 'b'));
    expect(chunks(seen)).toEqual(['a', 'b', 'c', 'd']);
    expect(live.remoteNext('e2')).toBe(4);
    expect(chunks(live.buffered('e2'))).toEqual(['a', 'b', 'c', 'd']);
    stop();
    expect(live.remoteNext('e2')).toBe(0);
    expect(live.buffered('e2')).toEqual([]);
  });

  it('ignores pieces of an execution nobody here watches', () => {
    const live = new LiveExecutions();
    const seen: LiveEvent[] = [];
    live.subscribe('e3', (e) => seen.push(e));
    live.remoteOutput('e3', piece(0, 'x'));
    expect(seen).toEqual([]);
  });
});
