import { describe, expect, it } from 'vitest';
import { idAt, idFloor, isUuid, newId } from './ids.js';

const UUID_V7 = /^[0-9a-f]{8}-[0-9a-f]{4}-7[0-9a-f]{3}-[89ab][0-9a-f]{3}-[0-9a-f]{12}$/;

/** The 48-bit unix-millisecond timestamp at the front of a UUIDv7 (RFC 9562 §5.7). */
function timestampOf(id: string): number {
  return parseInt(id.replaceAll('-', '').slice(0, 12), 16);
}

// newId keeps state per process; each test uses its own, later, time so tests do not interfere.
describe('newId', () => {
  it('is a lowercase UUIDv7 with the RFC 9562 variant, carrying the given time', () => {
    const now = Date.UTC(2030, 0, 1);
    const id = newId(now);
    expect(id).toMatch(UUID_V7);
    expect(timestampOf(id)).toBe(now);
    expect(isUuid(id)).toBe(true);
  });

  it('is strictly increasing over many calls within one millisecond, past the 12-bit counter', () => {
    const now = Date.UTC(2030, 0, 2);
    const ids = Array.from({ length: 20_000 }, () => newId(now));
    for (let i = 1; i < ids.length; i += 1) {
      if (!(ids[i]! > ids[i - 1]!)) throw new Error(`id ${i} (${ids[i]}) does not sort after ${ids[i - 1]}`);
    }
    expect(new Set(ids).size).toBe(ids.length);
    for (const id of ids) expect(id).toMatch(UUID_V7);
    // Overflowing the counter borrows from the next milliseconds, never from the past.
    expect(timestampOf(ids[0]!)).toBe(now);
    const last = timestampOf(ids.at(-1)!);
    expect(last).toBeGreaterThan(now);
    expect(last).toBeLessThanOrEqual(now + Math.ceil(ids.length / 3072) + 1);
  });

  it('keeps increasing when the clock steps back', () => {
    const now = Date.UTC(2030, 0, 3);
    const first = newId(now);
    const afterStepBack = newId(now - 5_000);
    expect(afterStepBack > first).toBe(true);
    expect(timestampOf(afterStepBack)).toBe(now);
  });

  it('sorts by time across milliseconds', () => {
    const now = Date.UTC(2030, 0, 4);
    const ids = [newId(now), newId(now + 1), newId(now + 1000), newId(now + 86_400_000)];
    expect([...ids].sort()).toEqual(ids);
    expect(ids.map(timestampOf)).toEqual([now, now + 1, now + 1000, now + 86_400_000]);
  });

  it('differs in its random bits between calls', () => {
    const now = Date.UTC(2030, 0, 5);
    const tails = new Set(Array.from({ length: 100 }, () => newId(now).slice(19)));
    expect(tails.size).toBe(100);
  });
});

describe('isUuid', () => {
  it.each([
    ['7b0c2a52-3a8e-4a51-9a57-1f1b4d4a0b0c', true],
    ['7B0C2A52-3A8E-4A51-9A57-1F1B4D4A0B0C', true],
    ['7b0c2a523a8e4a519a571f1b4d4a0b0c', false],
    ['7b0c2a52-3a8e-4a51-9a57-1f1b4d4a0b0', false],
    ['7b0c2a52-3a8e-4a51-9a57-1f1b4d4a0b0cc', false],
    ['g b0c2a52-3a8e-4a51-9a57-1f1b4d4a0b0c', false],
    [' 7b0c2a52-3a8e-4a51-9a57-1f1b4d4a0b0c', false],
    ['', false],
  ])('%j → %s', (value, expected) => {
    expect(isUuid(value)).toBe(expected);
  });
});

describe('idFloor', () => {
  it('sorts after every id of earlier milliseconds and before every id of its own and later ones', () => {
    const at = Date.UTC(2031, 5, 1);
    const floor = idFloor(at);
    expect(timestampOf(floor)).toBe(at);
    const earlier = Array.from({ length: 200 }, (_, i) => newId(at - 200 + i));
    for (const id of earlier) expect(id < floor).toBe(true);
    const later = Array.from({ length: 5000 }, () => newId(at));
    for (const id of later) expect(id > floor).toBe(true);
  });
});

describe('idAt', () => {
  it('is a UUIDv7 of the given time, past or present, sorting with other ids by that time', () => {
    const past = Date.UTC(2020, 0, 1);
    const id = idAt(past);
    expect(isUuid(id)).toBe(true);
    expect(id[14]).toBe('7');
    expect(['8', '9', 'a', 'b']).toContain(id[19]);
    expect(parseInt(id.replace(/-/g, '').slice(0, 12), 16)).toBe(past);
    expect(idAt(past) < newId()).toBe(true);
    expect(idFloor(past) <= id && id < idFloor(past + 1)).toBe(true);
    expect(idAt(past)).not.toBe(id);
  });
});
