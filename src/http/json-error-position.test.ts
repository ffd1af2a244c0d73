import { describe, expect, it } from 'vitest';
import { firstJsonErrorAt } from './json-error-position.js';

/** V8's own position, when its message gives one. */
function v8Position(text: string): number | undefined {
  try {
    JSON.parse(text);
  } catch (error) {
    const position = /at position (\d+)/.exec((error as Error).message);
    return position ? Number(position[1]) : undefined;
  }
  return -1;
}

describe('firstJsonErrorAt', () => {
  it.each([
    '{}', '[]', ' {"a": [1, -2.5e+3, true, false, null, "x\\n\\u00e9"], "b": {"c": {}}} ',
    '"text"', '0', '[[[[]]]]', '{"a":1,"b":[{},{"c":[]}]}',
  ])('finds nothing wrong in %j', (text) => {
    expect(firstJsonErrorAt(text)).toBe(-1);
  });

  // The mistakes V8 places itself: the reading agrees with JSON.parse on where each one is.
  it.each([
    '{"HostName": "web-1",}', '{\n  "a": 1\n  "b": 2\n}', '{"a" 1}', '{"a": 1} x', '{"a": "x\ty"}',
    '{a: 1}', '{"a": 01}', '{"a": -}', '{"a": -x}', '{"a": 1.}', '{"a": 1e}', '{"a": 1e+}', '[1 2]', '{"a":1,}', '{,}',
    '{"a": "\\x"}', '{"a": "\\u12"}', '{"a": "\\u12G4"}', '"abc',
  ])('places %j where JSON.parse does', (text) => {
    const expected = v8Position(text);
    expect(expected).toBeGreaterThanOrEqual(0);
    expect(firstJsonErrorAt(text)).toBe(expected);
  });

  // The mistakes V8 does not place: an unexpected token, and a text that stops too soon.
  it.each([
    ['{\n  "Act": tru\n}', 14],
    ['{\n  "AlarmName": \'disk\'\n}', 17],
    ['{\n  "Severity": undefined\n}', 16],
    ['[\n  1,\n  2,,\n]', 11],
    ['[1,]', 3],
    ['{"a":[}', 6],
    ['{\n  "HostName": "web-1"', 23],
    ['{\n  "HostName": "web-1', 22],
    ['[', 1],
  ])('places %j at index %d', (text, index) => {
    expect(firstJsonErrorAt(text)).toBe(index);
  });

  it('reads any depth without recursing', () => {
    expect(firstJsonErrorAt(`${'['.repeat(200_000)}x`)).toBe(200_000);
    expect(firstJsonErrorAt(`${'['.repeat(200_000)}${']'.repeat(200_000)}`)).toBe(-1);
  });
});
