import { BlockList, isIP } from 'node:net';
import type { FieldError } from '../errors/catalogue.js';

export type AddressCheck = (ip: string) => boolean;

const allowEverything: AddressCheck = () => true;

/** Returns a predicate for an IPv4/IPv6 CIDR allowlist; an empty list allows every address. */
export function compileAllowlist(cidrs: string[]): AddressCheck {
  if (cidrs.length === 0) return allowEverything;
  const list = new BlockList();
  for (const cidr of cidrs) {
    const { address, prefix, family } = parseCidr(cidr)!;
    list.addSubnet(address, prefix, family);
  }
  return (ip) => {
    const plain = unmapIpv4(ip);
    const family = isIP(plain);
    return family !== 0 && list.check(plain, family === 4 ? 'ipv4' : 'ipv6');
  };
}

export function allowlistErrors(cidrs: string[], field = 'ipAllowlist'): FieldError[] {
  return cidrs.flatMap((cidr, i) =>
    parseCidr(cidr)
      ? []
      : [{ path: `/body/${field}/${i}`, message: `"${cidr}" is not an IPv4 or IPv6 CIDR such as 203.0.113.0/24 or 2001:db8::/32` }],
  );
}

function parseCidr(cidr: string): { address: string; prefix: number; family: 'ipv4' | 'ipv6' } | undefined {
  const [address = '', prefixText, ...rest] = cidr.trim().split('/');
  const version = isIP(address);
  if (version === 0 || rest.length > 0) return undefined;
  const max = version === 4 ? 32 : 128;
  const prefix = prefixText === undefined ? max : Number(prefixText);
  if (!Number.isInteger(prefix) || prefix < 0 || prefix > max || (prefixText !== undefined && !/^\d+$/.test(prefixText))) return undefined;
  return { address, prefix, family: version === 4 ? 'ipv4' : 'ipv6' };
}

/** A dual-stack socket reports IPv4 callers as ::ffff:a.b.c.d; allowlists are written in IPv4. */
function unmapIpv4(ip: string): string {
  return ip.toLowerCase().startsWith('::ffff:') && isIP(ip.slice(7)) === 4 ? ip.slice(7) : ip;
}
