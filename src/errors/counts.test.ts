import { describe, expect, it } from 'vitest';
import { counted, times } from './counts.js';

describe('counts in words', () => {
  it.each([[0, '0 times'], [1, 'once'], [2, 'twice'], [3, '3 times'], [12, '12 times']])('%i: %s', (n, words) => expect(times(n)).toBe(words));

  it('puts the noun in the plural but for one', () => {
    expect(counted(0, 'host')).toBe('0 hosts');
    expect(counted(1, 'host')).toBe('1 host');
    expect(counted(2, 'execution')).toBe('2 executions');
    expect(counted(1, 'delivery', 'deliveries')).toBe('1 delivery');
    expect(counted(3, 'delivery', 'deliveries')).toBe('3 deliveries');
  });
});
