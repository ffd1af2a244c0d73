import { describe, expect, it } from 'vitest';
import { EGRESS_REFUSED, EgressPolicy } from './policy.js';

const lookup = (policy: EgressPolicy, hostname: string, all: boolean) =>
  new Promise<{ error: NodeJS.ErrnoException | null; address: unknown }>((resolve) => policy.lookup(hostname, { all }, (error, address) => resolve({ error, address })));

describe('EgressPolicy', () => {
  const closed = new EgressPolicy([]);

  it.each([
    ['127.0.0.1'], ['10.1.2.3'], ['172.16.0.9'], ['192.168.1.1'], ['169.254.169.254'], ['100.64.0.1'], ['0.0.0.0'], ['224.0.0.1'],
    ['::1'], ['::'], ['fd00::1'], ['fe80::1'], ['::ffff:10.0.0.1'], ['::ffff:169.254.169.254'], ['64:ff9b::a00:1'],
  ])('refuses %s, which is not the public internet', (address) => {
    expect(closed.permits(address)).toBe(false);
  });

  it.each([['93.184.216.34'], ['8.8.8.8'], ['2606:4700:4700::1111'], ['::ffff:8.8.8.8']])('permits the public address %s', (address) => {
    expect(closed.permits(address)).toBe(true);
  });

  it('permits exactly the networks the operator opens', () => {
    const open = new EgressPolicy(['10.20.0.0/16', 'fd00:1::/64']);
    expect(open.permits('10.20.5.5')).toBe(true);
    expect(open.permits('10.21.0.1')).toBe(false);
    expect(open.permits('fd00:1::7')).toBe(true);
    expect(open.permits('127.0.0.1')).toBe(false);
  });

  it('refuses an address literal in a URL, IPv6 in brackets too, and says how to open it', () => {
    expect(closed.refusesHost('169.254.169.254')).toMatch(/169.254.169.254 is a private, loopback or link-local address.*PITCREW_EGRESS_ALLOW_NETWORKS/);
    expect(closed.refusesHost('[::1]')).toMatch(/\[::1\] is a private/);
    expect(closed.refusesHost('hooks.slack.com')).toBeUndefined();
    expect(closed.refusesHost('8.8.8.8')).toBeUndefined();
  });

  it('refuses, at connect time, a name that resolves only to refused addresses', async () => {
    for (const all of [false, true]) {
      const { error } = await lookup(closed, 'localhost', all);
      expect(error?.code).toBe(EGRESS_REFUSED);
      expect(error?.message).toMatch(/localhost resolves only to private, loopback or link-local addresses/);
    }
  });

  it('answers a lookup with the permitted addresses, in the form asked for', async () => {
    const open = new EgressPolicy(['127.0.0.0/8', '::1/128']);
    const one = await lookup(open, 'localhost', false);
    expect(one.error).toBeNull();
    expect(['127.0.0.1', '::1']).toContain(one.address);
    const all = await lookup(open, 'localhost', true);
    expect(all.error).toBeNull();
    expect((all.address as Array<{ address: string }>).length).toBeGreaterThan(0);
  });

  it('resolves a host to an address to connect to, for clients without a lookup of their own', async () => {
    await expect(closed.resolve('10.0.0.25')).rejects.toMatchObject({ code: EGRESS_REFUSED, message: expect.stringMatching(/10.0.0.25 is a private/) });
    await expect(closed.resolve('localhost')).rejects.toMatchObject({ code: EGRESS_REFUSED });
    await expect(closed.resolve('8.8.8.8')).resolves.toBe('8.8.8.8');
    const open = new EgressPolicy(['127.0.0.0/8', '::1/128']);
    expect(['127.0.0.1', '::1']).toContain(await open.resolve('localhost'));
  });
});
