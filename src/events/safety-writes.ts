import type { CompiledQuery, Kysely } from 'kysely';
import type { Database, EscalationsTable, IdempotencyKeysTable } from '../store/schema.js';

/**
 * Escalations and idempotency keys of a batch, written with its events. Both are upserts: an
 * escalation already open for (rule, host, window) counts one more limited event; an idempotency
 * key older than 24 h (the transaction found none younger) is taken over by the new event.
 */
export function safetyWrites(db: Kysely<Database>, escalations: EscalationsTable[], keys: IdempotencyKeysTable[]): CompiledQuery[] {
  const writes: CompiledQuery[] = [];
  if (escalations.length > 0) {
    writes.push(
      db
        .insertInto('escalations')
        .values(escalations)
        .onConflict((oc) =>
          oc.columns(['rule_id', 'host_id', 'window_start']).doUpdateSet((eb) => ({
            limited_events: eb('escalations.limited_events', '+', eb.ref('excluded.limited_events')),
            last_event_id: eb.ref('excluded.last_event_id'),
            updated_at: eb.ref('excluded.updated_at'),
          })),
        )
        .compile(),
    );
  }
  if (keys.length > 0) {
    writes.push(
      db
        .insertInto('idempotency_keys')
        .values(keys)
        .onConflict((oc) =>
          oc.columns(['rule_id', 'key']).doUpdateSet((eb) => ({
            event_id: eb.ref('excluded.event_id'),
            fingerprint: eb.ref('excluded.fingerprint'),
            created_at: eb.ref('excluded.created_at'),
            tenant_id: eb.ref('excluded.tenant_id'),
          })),
        )
        .compile(),
    );
  }
  return writes;
}
