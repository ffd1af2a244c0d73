import { describe, expect, it } from 'vitest';
import { byHostname } from './sort';

describe('byHostname', () => {
  it('orders hosts as people count them: numbers as numbers, letters without case', () => {
    const names = ['web-10', 'web-2', 'db-1', 'Web-1', 'cache-1', 'web-1.example.com', 'api-3', 'web-1'];
    expect(byHostname(names.map((hostname) => ({ hostname }))).map((host) => host.hostname)).toEqual(['api-3', 'cache-1', 'db-1', 'Web-1', 'web-1', 'web-1.example.com', 'web-2', 'web-10']);
  });
});
