import type { CompiledQuery, Kysely } from 'kysely';
import type { Database, EscalationsTable, IdempotencyKeysTable } from '../store/schema.js';
import { chunksWithin, type Statements } from '../store/statements.js';

/**
 * Escalations and idempotency keys of a batch, written with its events. Both are upserts: an
 * escalation already open for (rule, host, window) counts one more limited event; an idempotency
 * key older than 24 h (the transaction found none younger) is taken over by the new event.
 * A rule over a fleet can be limited on every host at once: the rows go in as many statements as
 * the database's parameter limit needs.
 */
export function safetyWrites(db: Kysely<Database>, statements: Statements, escalations: EscalationsTable[], keys: IdempotencyKeysTable[]): CompiledQuery[] {
  const writes: CompiledQuery[] = [];
  for (const chunk of chunksWithin(escalations, statements.maxRowsPerStatement(escalations as unknown as Array<Record<string, unknown>>))) {
    writes.push(
      db
        .insertInto('escalations')
        .values(chunk)
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
  for (const chunk of chunksWithin(keys, statements.maxRowsPerStatement(keys as unknown as Array<Record<string, unknown>>))) {
    writes.push(
      db
        .insertInto('idempotency_keys')
        .values(chunk)
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
