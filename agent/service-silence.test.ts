import { describe, expect, it } from 'vitest';
import { SILENT_CHECKS, ServiceSilence } from './service-silence.js';

/**
 * Runs the agent's heartbeat checks over a story that starts at the welcome, one letter per event:
 * `f` a frame read from the service, `c` a check. Returns the number of the check (from 1) that
 * gave up on the service, or -1.
 */
function dropAt(story: string): number {
  const silence = new ServiceSilence();
  let checks = 0;
  for (const event of story) {
    if (event === 'f') silence.heard();
    else {
      checks += 1;
      if (silence.check()) return checks;
    }
  }
  return -1;
}

describe('ServiceSilence (the agent side of docs/agent.md "Liveness")', () => {
  it('keeps a connection whose service answers every ping', () => {
    expect(dropAt('fc'.repeat(20))).toBe(-1);
  });

  it('gives up at the third check after the last frame heard: 3 to 4 heartbeats after it', () => {
    expect(dropAt('fcfcfc' + 'cccc')).toBe(3 + SILENT_CHECKS);
    // The welcome is the first frame: silent from it, the agent gives up at its fourth check.
    expect(dropAt('ccc')).toBe(-1);
    expect(dropAt('cccc')).toBe(1 + SILENT_CHECKS);
  });

  it('starts counting again at any frame: a message, a ping or a pong', () => {
    expect(dropAt('ccfccfcc')).toBe(-1);
    expect(dropAt('ccfccfcccc')).toBe(8);
  });

  it('counts checks, not time: an agent whose own loop runs late, reading each pong only after its next check, stays', () => {
    // The fleet benchmark's case: thousands of agents in one process, whose loop turns take
    // longer than a heartbeat. Each check finds the pong to the ping before the last, read in the
    // turn between; a clock would see tens of seconds since it and reconnect (bench/README.md).
    expect(dropAt('c' + 'fc'.repeat(50))).toBe(-1);
  });

  it('counts only the checks that ran: a paused agent takes no pause for silence', () => {
    // A host that froze the agent (a paused VM, SIGSTOP) runs one late check on waking, then
    // reads what the service sent meanwhile.
    expect(dropAt('fc' + 'cf' + 'c')).toBe(-1);
  });
});
