import { describe, expect, it } from 'vitest';
import { allowlistErrors, compileAllowlist } from './allowlist.js';

describe('compileAllowlist', () => {
  it('allows every address when the list is empty', () => {
    const allows = compileAllowlist([]);
    for (const ip of ['127.0.0.1', '203.0.113.9', '::1', '2001:db8::1']) expect(allows(ip)).toBe(true);
  });

  it.each<[string[], string, boolean]>([
    [['10.0.0.0/8'], '10.0.0.0', true],
    [['10.0.0.0/8'], '10.255.255.255', true],
    [['10.0.0.0/8'], '11.0.0.0', false],
    [['10.0.0.0/8'], '9.255.255.255', false],
    [['192.168.1.0/24', '172.16.0.0/12'], '172.31.255.1', true],
    [['192.168.1.0/24', '172.16.0.0/12'], '172.32.0.1', false],
    [['192.168.1.0/24', '172.16.0.0/12'], '192.168.2.1', false],
    [['203.0.113.7/32'], '203.0.113.7', true],
    [['203.0.113.7/32'], '203.0.113.8', false],
    // A bare address is a /32 (or /128).
    [['203.0.113.7'], '203.0.113.7', true],
    [['203.0.113.7'], '203.0.113.6', false],
    [['2001:db8::/32'], '2001:db8:ffff:ffff::1', true],
    [['2001:db8::/32'], '2001:0db8:0000:0000:0000:0000:0000:0001', true],
    [['2001:db8::/32'], '2001:DB8::A', true],
    [['2001:db8::/32'], '2001:db9::1', false],
    [['2001:db8::1'], '2001:db8::1', true],
    [['2001:db8::1'], '2001:db8::2', false],
    [['fe80::/10'], 'febf::1', true],
    [['fe80::/10'], 'fec0::1', false],
    // An IPv4 list says nothing about native IPv6 callers, nor the reverse.
    [['10.0.0.0/8'], '2001:db8::1', false],
    [['2001:db8::/32'], '10.0.0.1', false],
  ])('%j allows %s: %s', (cidrs, ip, expected) => {
    expect(compileAllowlist(cidrs)(ip)).toBe(expected);
  });

  describe('IPv4-mapped IPv6 callers (a dual-stack socket reports ::ffff:a.b.c.d)', () => {
    const allows = compileAllowlist(['10.0.0.0/8']);
    it.each([
      ['::ffff:10.1.1.1', true],
      ['::FFFF:10.1.1.1', true],
      ['::ffff:11.1.1.1', false],
      ['::ffff:0a01:0101', true],
    ])('%s → %s', (ip, expected) => expect(allows(ip)).toBe(expected));
  });

  it('/0 allows the whole family', () => {
    const v4 = compileAllowlist(['0.0.0.0/0']);
    for (const ip of ['0.0.0.0', '1.2.3.4', '255.255.255.255', '::ffff:8.8.8.8']) expect(v4(ip)).toBe(true);
    expect(v4('2001:db8::1')).toBe(false);
    const v6 = compileAllowlist(['::/0']);
    for (const ip of ['::', '::1', '2001:db8::1', 'ffff:ffff:ffff:ffff:ffff:ffff:ffff:ffff']) expect(v6(ip)).toBe(true);
  });

  it('accepts entries with surrounding spaces, as allowlistErrors does', () => {
    expect(compileAllowlist([' 10.0.0.0/8 '])('10.1.2.3')).toBe(true);
  });

  it.each(['', 'not-an-ip', '10.0.0', '10.0.0.0.1', '256.1.1.1', '10.0.0.1/8', 'localhost', '::ffff:'])('refuses the malformed caller address %j', (ip) => {
    expect(compileAllowlist(['0.0.0.0/0', '::/0'])(ip)).toBe(false);
  });
});

describe('allowlistErrors', () => {
  it('accepts valid IPv4 and IPv6 CIDRs and bare addresses', () => {
    expect(allowlistErrors(['10.0.0.0/8', '203.0.113.7', '0.0.0.0/0', '2001:db8::/32', '::/0', '::1', '::ffff:10.0.0.0/104', ' 10.0.0.0/8 ', '10.0.0.0/08'])).toEqual([]);
    expect(allowlistErrors([])).toEqual([]);
  });

  it.each([
    '', ' ', '10.0.0.0/33', '10.0.0.0/-1', '10.0.0.0/', '10.0.0/8', '256.0.0.0/8', '10.0.0.0/8/9', '10.0.0.0/1e1', '10.0.0.0/8.0',
    '10.0.0.0/ 8', '10.0.0.0/0x8', '2001:db8::/129', '2001:db8:::/32', 'gggg::/16', 'host.example.com', '10.0.0.0-10.0.0.255', '*',
  ])('refuses %j', (cidr) => {
    const errors = allowlistErrors(['10.0.0.0/8', cidr]);
    expect(errors).toHaveLength(1);
    expect(errors[0]!.path).toBe('/body/ipAllowlist/1');
    expect(errors[0]!.message).toContain(`"${cidr}"`);
  });

  it('points at every bad entry by its index', () => {
    expect(allowlistErrors(['bad', '10.0.0.0/8', 'worse/99', '::/0', '1.2.3.4/40']).map((e) => e.path)).toEqual([
      '/body/ipAllowlist/0', '/body/ipAllowlist/2', '/body/ipAllowlist/4',
    ]);
  });
});
