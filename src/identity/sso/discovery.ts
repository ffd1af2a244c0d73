import type * as client from 'openid-client';
import type { Discovered, DiscoveryMemo } from './oidc.js';
import type { SsoProviderRow } from './providers.js';

/**
 * How long a provider's discovery document is reused. Providers change it rarely (a new endpoint,
 * a new jwks_uri at a key rotation); ten minutes bounds how long a change there goes unseen, and a
 * key the remembered configuration does not know makes a sign-in read it again at once.
 */
export const DISCOVERY_TTL_MS = 10 * 60_000;

interface Entry {
  /** The provider's settings the document was read for: a change of them (on any node) is a new provider. */
  issuer: string;
  updatedAt: number;
  fetchedAt: number;
  document: string;
  jwks: client.ExportedJWKSCache | undefined;
}

/**
 * Each OpenID provider's discovery document and keys, kept between sign-ins (in this process):
 * without it every sign-in start and every answer read the document again, two requests to the
 * provider per person signing in. An entry is used only for the provider's settings it was read
 * for (their issuer and `updated_at`, so a change made on another node is seen at the next
 * sign-in here) and for DISCOVERY_TTL_MS.
 */
export class OidcDiscoveryCache {
  private readonly entries = new Map<string, Entry>();

  constructor(private readonly clock: () => number, private readonly ttlMs = DISCOVERY_TTL_MS) {}

  /** What a sign-in with this provider may reuse: nothing when the entry is missing, stale or of other settings. */
  memo(row: SsoProviderRow, issuer: string): DiscoveryMemo {
    const entry = this.entries.get(row.id);
    if (!entry) return {};
    if (entry.issuer !== issuer || entry.updatedAt !== row.updated_at || this.clock() - entry.fetchedAt >= this.ttlMs) {
      this.entries.delete(row.id);
      return {};
    }
    return { document: entry.document, jwks: entry.jwks };
  }

  /** Keeps what a sign-in read: the document (timed from when it was fetched) and the keys as they are now. */
  keep(row: SsoProviderRow, issuer: string, discovered: Discovered): void {
    const earlier = this.entries.get(row.id);
    const fetchedAt = earlier && earlier.document === discovered.document && discovered.reused ? earlier.fetchedAt : this.clock();
    const jwks = discovered.jwks();
    this.entries.set(row.id, { issuer, updatedAt: row.updated_at, fetchedAt, document: discovered.document, jwks: jwks ? structuredClone(jwks) : earlier?.jwks });
  }

  /** The provider changed or went: its next sign-in reads its configuration afresh. */
  forget(providerId: string): void {
    this.entries.delete(providerId);
  }
}
