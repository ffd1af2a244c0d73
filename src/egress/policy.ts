import { lookup as dnsLookup, type LookupAddress, type LookupAllOptions, type LookupOptions } from 'node:dns';
import { isIP } from 'node:net';
import { EGRESS_SETTING } from '../config/config.js';
import { compileAllowlist, type AddressCheck } from '../tenants/allowlist.js';

/**
 * Addresses that are not the public internet (RFC 6890 and the IANA special-purpose registries):
 * this host, private networks, link-local (cloud metadata services live at 169.254.169.254),
 * carrier NAT, benchmarking, multicast, reserved, and IPv6's loopback, unique-local, link-local,
 * multicast and the NAT64 prefix that can embed any of the IPv4 ones. IPv4-mapped IPv6 addresses
 * are judged as the IPv4 address they carry.
 */
const NOT_PUBLIC = [
  '0.0.0.0/8', '10.0.0.0/8', '100.64.0.0/10', '127.0.0.0/8', '169.254.0.0/16', '172.16.0.0/12', '192.0.0.0/24',
  '192.0.2.0/24', '192.168.0.0/16', '198.18.0.0/15', '198.51.100.0/24', '203.0.113.0/24', '224.0.0.0/4', '240.0.0.0/4',
  '::/128', '::1/128', '64:ff9b::/96', '100::/64', '2001:db8::/32', 'fc00::/7', 'fe80::/10', 'ff00::/8',
];


type LookupCallback = (error: NodeJS.ErrnoException | null, address: string | LookupAddress[], family?: number) => void;

/**
 * Where the service may connect on a tenant's behalf (a chat or signed webhook, an SMTP server, a
 * git repository, Keystone, Monasca, OpenStack): one policy for every such call. A tenant
 * configures the URL, so without a policy any tenant could make the service call into the
 * network it runs in (its metadata service, an internal API) and read the answer back in the
 * delivery's error: server-side request forgery. Public addresses are always allowed; the
 * others only within the networks the operator lists. The check is made on the addresses a name
 * resolves to, at connect time, so a name that changes its answer after it was checked
 * (DNS rebinding) gains nothing.
 */
export class EgressPolicy {
  private readonly notPublic: AddressCheck = compileAllowlist(NOT_PUBLIC);
  private readonly allowed: AddressCheck;

  constructor(allowNetworks: readonly string[]) {
    // compileAllowlist allows everything for an empty list; here an empty list opens nothing.
    this.allowed = allowNetworks.length === 0 ? () => false : compileAllowlist([...allowNetworks]);
  }

  /** True when the service may connect to this IP address. */
  permits(address: string): boolean {
    return !this.notPublic(address) || this.allowed(address);
  }

  /** Why a URL's host may not be called, when it is an address literal outside the policy. */
  refusesHost(hostname: string): string | undefined {
    const address = hostname.startsWith('[') ? hostname.slice(1, -1) : hostname;
    return isIP(address) !== 0 && !this.permits(address) ? refusal(hostname, 'is a private, loopback or link-local address') : undefined;
  }

  /**
   * The address to connect to for a host name or address literal, for clients that take no
   * `lookup` (nodemailer): connect to it, with the name kept for TLS verification. Rejects with
   * code EGRESS_REFUSED when the policy permits none of its addresses.
   */
  resolve(hostname: string): Promise<string> {
    const refused = this.refusesHost(hostname);
    if (refused) return Promise.reject(Object.assign(new Error(refused), { code: EGRESS_REFUSED }));
    if (isIP(hostname) !== 0) return Promise.resolve(hostname);
    return new Promise((resolve, reject) => {
      this.lookup(hostname, {}, (error, address) => (error ? reject(error) : resolve(address as string)));
    });
  }

  /** A `lookup` for http.request and net.connect that keeps only the addresses the policy permits. */
  readonly lookup = (hostname: string, options: LookupOptions, callback: LookupCallback): void => {
    dnsLookup(hostname, { ...options, all: true } satisfies LookupAllOptions, (error, addresses) => {
      if (error) return callback(error, []);
      const permitted = addresses.filter((a) => this.permits(a.address));
      if (permitted.length === 0) return callback(Object.assign(new Error(refusal(hostname, 'resolves only to private, loopback or link-local addresses')), { code: EGRESS_REFUSED }), []);
      if (options.all) return callback(null, permitted);
      callback(null, permitted[0]!.address, permitted[0]!.family);
    });
  };
}

/** The error code of a connection the policy refused. */
export const EGRESS_REFUSED = 'EPITCREWEGRESS';

function refusal(hostname: string, what: string): string {
  return `${hostname} ${what}, which pitcrew does not call on a tenant's behalf; the operator can allow the network with ${EGRESS_SETTING}`;
}
