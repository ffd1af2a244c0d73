import { describe, expect, it } from 'vitest';
import { describeJsonError, nestsDeeperThan } from './json-body.js';

describe('describeJsonError', () => {
  it.each([
    ['{"HostName": "web-1",}', "expected double-quoted property name at line 1, column 22"],
    ['{\n  "HostName": "web-1",\n  "Severity": "critical",\n}', 'expected double-quoted property name at line 4, column 1'],
    ['{"HostName": "web-1"', "expected ',' or '}' after property value at line 1, column 21"],
    ['{"HostName" "web-1"}', "expected ':' after property name at line 1, column 13"],
    ['{"a": 1} {"b": 2}', 'unexpected non-whitespace character after JSON at line 1, column 10'],
    ['{"AlarmName": "disk\tfull"}', 'bad control character in string literal at line 1, column 20'],
    ['{"Act": tru}', "unexpected token '}' at line 1, column 12"],
    // A template written over several lines, the mistakes V8 gives no position for (issue 36).
    ['{\n  "HostName": "web-1",\n  "Act": tru\n}', "unexpected token '\\n' at line 3, column 13"],
    ['{\n  "HostName": "web-1",\n  "AlarmName": \'disk_full\'\n}', "unexpected token ''' at line 3, column 16"],
    ['{\n  "HostName": "web-1",\n  "Severity": critical\n}', "unexpected token 'c' at line 3, column 15"],
    ['{\n  "HostName": "web-1",\n  "Severity": "critical"\n', "expected ',' or '}' after property value at line 4, column 1"],
    ['{\n  "HostName": "web-1",\n  "Severity": "crit', 'unterminated string at line 3, column 20'],
    ['[\n  {"HostName": "web-1"},\n', 'unexpected end of JSON input at line 3, column 1'],
    ['{"a": 1', "expected ',' or '}' after property value at line 1, column 8"],
    ['   ', 'the body is empty; send a JSON object'],
    ['{"__proto__": {"admin": true}}', /"__proto__" or "constructor.prototype" key, which is refused/],
  ])('%j: %s', (text, expected) => {
    expect(describeJsonError(text)).toMatch(expected);
  });

  it('never quotes the text it refuses', () => {
    const secret = 'hunter2-token-value';
    expect(describeJsonError(`{"MetaData": {"Token": "${secret}"}, oops}`)).not.toContain(secret);
    expect(describeJsonError(`{"Token": ${secret}}`)).not.toContain(secret);
    // A longer body: V8 quotes a window of it with dots around; none of it is kept.
    expect(describeJsonError(`{"MetaData": {"Name": "x"}, "Token": ${secret}, "Other": 1}`)).not.toContain('hunter2');
  });
});

describe('nestsDeeperThan', () => {
  const nested = (depth: number) => JSON.parse(`${'['.repeat(depth)}${']'.repeat(depth)}`);
  it.each([
    [{}, 1, false],
    [{ a: 1, b: 'x' }, 1, false],
    [{ a: {} }, 1, true],
    [{ MetaData: { Key1: 'Value1' } }, 2, false],
    [{ a: [1, 2, { b: [] }] }, 3, true],
    ['text', 0, false],
    [null, 0, false],
  ])('%j deeper than %d: %s', (value, max, deeper) => {
    expect(nestsDeeperThan(value, max)).toBe(deeper);
  });

  it('answers for any depth without recursing', () => {
    expect(nestsDeeperThan(nested(64), 64)).toBe(false);
    expect(nestsDeeperThan(nested(65), 64)).toBe(true);
    expect(nestsDeeperThan(nested(200_000), 64)).toBe(true);
  });
});
