import { describe, expect, it } from 'vitest';
import { isLoopbackUrl, safeReturnPath } from './urls.js';

describe('safeReturnPath', () => {
  it.each([
    ['/rules?x=1#top', '/rules?x=1#top'],
    ['/', '/'],
    ['//evil.test/', '/'],
    ['/\\evil.test', '/'],
    ['https://evil.test/', '/'],
    ['rules', '/'],
    [undefined, '/'],
    ['/a/../b', '/b'],
  ])('%s → %s', (given, expected) => {
    expect(safeReturnPath(given)).toBe(expected);
  });
});

describe('isLoopbackUrl', () => {
  it.each([
    ['http://127.0.0.1:8080', true],
    ['http://localhost/realms/x', true],
    ['http://[::1]:9000', true],
    ['http://10.0.0.1', false],
    ['https://accounts.google.com', false],
  ])('%s → %s', (url, expected) => {
    expect(isLoopbackUrl(url)).toBe(expected);
  });
});
