import type { CompiledQuery } from 'kysely';
import type { EscalationsTable, IdempotencyKeysTable } from '../store/schema.js';
import type { Statements } from '../store/statements.js';

/** An escalation already open for (rule, host, window) counts one more limited event. */
const ESCALATION_CONFLICT = 'on conflict ("rule_id", "host_id", "window_start") do update set '
  + '"limited_events" = "escalations"."limited_events" + "excluded"."limited_events", "last_event_id" = "excluded"."last_event_id", "updated_at" = "excluded"."updated_at"';

/** An idempotency key older than 24 h (the transaction found none younger) is taken over by the new event. */
const KEY_CONFLICT = 'on conflict ("rule_id", "key") do update set '
  + '"event_id" = "excluded"."event_id", "fingerprint" = "excluded"."fingerprint", "created_at" = "excluded"."created_at", "tenant_id" = "excluded"."tenant_id"';

/**
 * Escalations and idempotency keys of a batch, written with its events, both as upserts. A rule
 * over a fleet can be limited on every host at once: the rows go in as many statements as the
 * database's parameter limit needs. Texts kept per shape (store/statements.ts): every alert of an
 * integration writes a key, and Kysely's builder took ~1 µs per row to compile them.
 */
export function safetyWrites(statements: Statements, escalations: EscalationsTable[], keys: IdempotencyKeysTable[]): CompiledQuery[] {
  return [...statements.inserts('escalations', escalations, ESCALATION_CONFLICT), ...statements.inserts('idempotency_keys', keys, KEY_CONFLICT)];
}
