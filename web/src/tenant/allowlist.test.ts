import { describe, expect, it } from 'vitest';
import { placeFieldErrors } from '../api/problem';
import { allowlistEntries, allowlistRowOf, sameList, type AllowlistRow } from './allowlist';

describe('the allowlist editor', () => {
  const rows: AllowlistRow[] = [
    { id: 7, value: ' 203.0.113.0/24 ' },
    { id: 8, value: '   ' },
    { id: 9, value: 'not-an-address' },
  ];

  it('sends the rows that are not blank, trimmed, remembering where each came from', () => {
    expect(allowlistEntries(rows)).toEqual({ cidrs: ['203.0.113.0/24', 'not-an-address'], rowIds: [7, 9] });
    expect(allowlistEntries([{ id: 1, value: '' }])).toEqual({ cidrs: [], rowIds: [] });
  });

  it("places the service's error for entry i at the row it was sent from, and keeps the rest", () => {
    const { errors, unplaced } = placeFieldErrors(
      [
        { path: '/body/ipAllowlist/1', message: '"not-an-address" is not an IPv4 or IPv6 CIDR' },
        { path: '/body/ipAllowlist', message: 'must NOT have more than 500 items' },
      ],
      allowlistRowOf([7, 9]),
    );
    expect(errors).toEqual({ 9: '"not-an-address" is not an IPv4 or IPv6 CIDR' });
    expect(unplaced).toEqual([{ path: '/body/ipAllowlist', message: 'must NOT have more than 500 items' }]);
  });

  it('compares lists in order', () => {
    expect(sameList(['a', 'b'], ['a', 'b'])).toBe(true);
    expect(sameList(['a', 'b'], ['b', 'a'])).toBe(false);
    expect(sameList([], ['a'])).toBe(false);
  });
});
