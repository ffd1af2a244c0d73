import { describe, expect, it } from 'vitest';
import { Liveness, type Peer } from './liveness.js';

/** A connection that records what the check did to it, one letter a check: - nothing, p ping, x dropped. */
class FakePeer implements Peer {
  story = '';
  private acted = false;
  ping(): void {
    this.story += 'p';
    this.acted = true;
  }
  terminate(): void {
    this.story += 'x';
    this.acted = true;
  }
  endCheck(): void {
    if (!this.acted) this.story += '-';
    this.acted = false;
  }
}

/** Runs one check per entry of `frames`: whether a frame came in the interval before it (the first: the hello, at the accept). */
function run(frames: boolean[]): string {
  const liveness = new Liveness<FakePeer>();
  const peer = new FakePeer();
  let dropped = false;
  for (const frame of frames) {
    if (dropped) break;
    if (frame) liveness.heard(peer);
    liveness.check([peer]);
    peer.endCheck();
    dropped = peer.story.endsWith('x');
  }
  return peer.story;
}

describe('Liveness (half-open agent connections, docs/agent.md "Liveness")', () => {
  it.each([
    ['an agent that pings every heartbeat is never pinged', [true, true, true, true, true], '-----'],
    ['the connection of a silent agent is pinged after one silent interval and dropped at the next check', [true, true, false, false, false], '--px'],
    ['silent from its accept: pinged at the second check, dropped at the third', [true, false, false, false], '-px'],
    ['an agent with a longer heartbeat answers our ping and stays', [true, false, true, false, true, false, true], '-p-p-p-'],
    ['a late ping of the agent after ours is enough', [true, false, true, true], '-p--'],
  ])('%s', (_, frames, story) => {
    expect(run(frames)).toBe(story);
  });

  it.each([1, 2, 5])('drops a connection at the second check after the last frame heard (%i intervals with frames): 2 to 3 intervals after it', (talking) => {
    const frames = [...Array<boolean>(talking).fill(true), false, false, false];
    expect(run(frames)).toBe(`${'-'.repeat(talking)}px`);
  });

  it('checks each connection on its own', () => {
    const liveness = new Liveness<FakePeer>();
    const talking = new FakePeer();
    const silent = new FakePeer();
    liveness.heard(silent); // both accepted
    for (let i = 0; i < 3; i += 1) {
      liveness.heard(talking);
      liveness.check([talking, silent]);
      talking.endCheck();
      silent.endCheck();
    }
    expect([talking.story, silent.story]).toEqual(['---', '-px']);
  });
});
