import type { Kysely } from 'kysely';
import type { Database } from '../store/schema.js';
import { compileAllowlist, type AddressCheck } from './allowlist.js';
import { findActiveApiKey, parseAgentAllowlist, parseAllowlist, parseThrottle, type ThrottleSettings } from './repository.js';
import type { ApiKeyScope } from './scopes.js';
import { hashSecret } from '../identity/secrets.js';
import { TokenBucket } from './throttle.js';

/** What ingress and enrolment need to know about a caller, resolved from its API key. */
export interface CallerAccess {
  keyId: string;
  keyName: string;
  tenantId: string;
  /** What the key may do; the transaction that acts on it reads them again. */
  scopes: readonly ApiKeyScope[];
  /** The tenant's IP allowlist, for webhook calls. */
  allows: AddressCheck;
  /** The tenant's agent allowlist, for enrolments. */
  allowsAgent: AddressCheck;
  bucket: TokenBucket;
}

interface Entry {
  access: CallerAccess;
  loadedAt: number;
}

/**
 * An in-memory cache from API key to tenant, so ingress authenticates, filters and throttles
 * without a query. It is a hint, not the authority: the transaction that stores an event (or
 * enrols an agent) re-checks the key and its scopes, so a revoked or narrowed key fails at once on
 * every node. A change of keys, scopes, allowlists or throttle is announced to the other nodes
 * (cluster/wakeups.ts); entries are also reloaded after `ttlMs`, in
 * case an announcement was lost.
 */
export class KeyDirectory {
  private readonly entries = new Map<string, Entry>();
  private readonly buckets = new Map<string, TokenBucket>();

  constructor(
    private readonly db: Kysely<Database>,
    private readonly throttleDefaults: ThrottleSettings,
    /** Tells the other nodes of a cluster that a tenant's keys or settings changed. */
    private readonly announce: (tenantId: string) => void = () => undefined,
    private readonly ttlMs = 30_000,
  ) {}

  /** The key's access when this node holds it, fresh: no query, no promise. Else resolve() reads it. */
  known(apiKey: string, now = Date.now()): CallerAccess | undefined {
    return this.fresh(hashSecret(apiKey), now);
  }

  async resolve(apiKey: string, now = Date.now()): Promise<CallerAccess | undefined> {
    const hash = hashSecret(apiKey);
    const kept = this.fresh(hash, now);
    if (kept) return kept;
    const found = await findActiveApiKey(this.db, apiKey);
    if (!found) {
      this.entries.delete(hash);
      return undefined;
    }
    const throttle = parseThrottle(found.tenant) ?? this.throttleDefaults;
    const access: CallerAccess = {
      keyId: found.keyId,
      keyName: found.keyName,
      tenantId: found.tenant.id,
      scopes: found.scopes,
      allows: compileAllowlist(parseAllowlist(found.tenant)),
      allowsAgent: compileAllowlist(parseAgentAllowlist(found.tenant)),
      bucket: this.bucketFor(found.tenant.id, throttle),
    };
    this.entries.set(hash, { access, loadedAt: now });
    return access;
  }

  private fresh(hash: string, now: number): CallerAccess | undefined {
    const cached = this.entries.get(hash);
    return cached && now - cached.loadedAt < this.ttlMs ? cached.access : undefined;
  }

  /** A tenant's keys or settings changed here: forgotten on this node, and on the others at once. */
  tenantChanged(tenantId: string): void {
    this.forgetTenant(tenantId);
    this.announce(tenantId);
  }

  /** Drops what is cached for a tenant, so its next call reads keys and settings again. */
  forgetTenant(tenantId: string): void {
    for (const [hash, entry] of this.entries) {
      if (entry.access.tenantId === tenantId) this.entries.delete(hash);
    }
  }

  private bucketFor(tenantId: string, settings: ThrottleSettings): TokenBucket {
    // One bucket per tenant, shared by all its keys, kept across reloads so a reload never refills it.
    let bucket = this.buckets.get(tenantId);
    if (bucket) bucket.reconfigure(settings);
    else this.buckets.set(tenantId, (bucket = new TokenBucket(settings)));
    return bucket;
  }
}
