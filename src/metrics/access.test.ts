import { describe, expect, it } from 'vitest';
import { carriesMetricsToken } from './access.js';

describe('carriesMetricsToken', () => {
  const token = 'a-metrics-token-of-some-length';

  it.each([
    [`Bearer ${token}`, true],
    [`bearer ${token}`, true],
    [`Bearer ${token}x`, false],
    [`Bearer ${token.slice(0, -1)}`, false],
    [`Basic ${token}`, false],
    [token, false],
    ['Bearer ', false],
    [undefined, false],
  ])('%s → %s', (header, expected) => {
    expect(carriesMetricsToken(header, token)).toBe(expected);
  });
});
