import { describe, expect, it } from 'vitest';
import { isLoopback } from './gateway.js';

describe('isLoopback (plain-HTTP agent connections are accepted only from these)', () => {
  it.each([
    ['127.0.0.1', true],
    ['127.3.2.1', true],
    ['::1', true],
    ['::ffff:127.0.0.1', true],
    ['10.0.0.1', false],
    ['192.0.2.7', false],
    ['::ffff:10.0.0.1', false],
    ['2001:db8::1', false],
    ['', false],
    ['localhost', false],
  ])('%s → %s', (address, loopback) => {
    expect(isLoopback(address)).toBe(loopback);
  });
});
