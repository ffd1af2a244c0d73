import { describe, expect, it } from 'vitest';
import { CappedOutput, characterBoundary } from './capped-output.js';

describe('CappedOutput', () => {
  it.each([
    ['ascii', 'abcdef', 4, 'abcd'],
    ['a 2-byte character cut in half', 'aé', 2, 'a'],
    ['a 3-byte character cut after one byte', 'a€', 2, 'a'],
    ['a 4-byte character cut after three bytes', 'a😀', 4, 'a'],
    ['a complete 4-byte character', 'a😀b', 5, 'a😀'],
  ])('keeps %s valid', (_name, text, limit, expected) => {
    const output = new CappedOutput(limit);
    output.push(Buffer.from(text));
    expect(output.text()).toBe(expected);
    expect(output.truncated).toBe(true);
  });

  it('decodes live chunks that split a character', () => {
    const output = new CappedOutput(100);
    const bytes = Buffer.from('é€');
    expect(output.push(bytes.subarray(0, 1))).toBe('');
    expect(output.push(bytes.subarray(1, 3))).toBe('é');
    expect(output.push(bytes.subarray(3))).toBe('€');
    expect(output.text()).toBe('é€');
    expect(output.truncated).toBe(false);
  });

  it('finds the boundary of an empty or continuation-only buffer', () => {
    expect(characterBoundary(Buffer.alloc(0))).toBe(0);
    expect(characterBoundary(Buffer.from([0x80, 0x80]))).toBe(0);
  });
});
