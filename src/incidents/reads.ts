import { CompiledQuery, type QueryResult } from 'kysely';
import type { Dialect } from '../store/database.js';
import type { IncidentRow } from '../store/schema.js';
import type { Statements } from '../store/statements.js';
import { DEFAULT_SETTINGS, IncidentBook, scopeOf, type IncidentSettings, type Sighting } from './book.js';

/** A namespace of PostgreSQL's two-key advisory locks (rules: 0x70637231, retention: 0x70637232). */
const INCIDENT_LOCK_CLASS = 0x70637233;

/**
 * How long after its resolution a notification's repeat is still recognised as one: a tool's
 * retries and a late replica's copy come within minutes (SNS retries for an hour at most).
 */
export const REPEAT_WINDOW_MS = 24 * 3_600_000;

/**
 * PostgreSQL: a transaction lock per alarm (tenant, integration, key), taken before its incidents
 * are read, so that service nodes sharing the database keep one alarm's incident one after the
 * other: each reads what the other committed, and two never open an incident of one alarm at once
 * (the partial unique index would refuse the second, failing its whole batch). One statement, keys
 * in ascending order: two transactions wanting the same alarms never deadlock. The ingest takes
 * these before its rules' locks (safety-reads.ts), and nothing takes them in the other order.
 * SQLite has a single writer already.
 */
export function lockAlarms(scopes: readonly string[]): CompiledQuery {
  return CompiledQuery.raw(
    `select pg_advisory_xact_lock(${INCIDENT_LOCK_CLASS}, k) from (select distinct hashtext(s) as k from unnest($1::text[]) as s order by k) as ordered`,
    [[...new Set(scopes)]],
  );
}

/** The scopes (see scopeOf) of the sightings: what lockAlarms takes. */
export function scopesOf(sightings: readonly Sighting[]): string[] {
  return sightings.map((s) => scopeOf(s.tenantId, s.integrationId, s.observation.incidentKey));
}

interface SettingsRow {
  id: string;
  incident_automation_seconds: number;
  incident_quiet_seconds: number;
}

/**
 * What a batch of sightings needs read, in the ingest transaction's first trip (no trip of its
 * own): the lock of each alarm (PostgreSQL), the open incidents of their keys, those resolved
 * within REPEAT_WINDOW_MS (a repeat after the resolution is recognised), and their tenants'
 * settings. Four statements whatever the batch's size, none when it has no sighting.
 */
export class IncidentReads {
  readonly queries: CompiledQuery[];

  constructor(
    statements: Statements,
    dialect: Dialect,
    private readonly sightings: readonly Sighting[],
    now: number,
  ) {
    if (sightings.length === 0) {
      this.queries = [];
      return;
    }
    const keys = [...new Set(sightings.map((s) => s.observation.incidentKey))];
    const tenants = [...new Set(sightings.map((s) => s.tenantId))];
    const ofKeys = `"incident_key" in (${statements.list(keys.length)}) and "tenant_id" in (${statements.list(tenants.length, keys.length)})`;
    const at = keys.length + tenants.length + 1;
    this.queries = [
      ...(dialect === 'postgres' ? [lockAlarms(scopesOf(sightings))] : []),
      CompiledQuery.raw(`select * from "incidents" ${indexedBy(dialect, 'incidents_open_key')} where "state" = 'open' and ${ofKeys}`, [...keys, ...tenants]),
      CompiledQuery.raw(`select * from "incidents" ${indexedBy(dialect, 'incidents_key_resolved')} where "state" = 'resolved' and ${ofKeys} and "resolved_at" > ${dialect === 'postgres' ? `$${at}` : '?'}`, [...keys, ...tenants, now - REPEAT_WINDOW_MS]),
      CompiledQuery.raw(`select "id", "incident_automation_seconds", "incident_quiet_seconds" from "tenants" where "id" in (${statements.list(tenants.length)})`, tenants),
    ];
  }

  /** The book of the batch, from the results of `queries` (the last of the trip's results). */
  book(results: readonly QueryResult<unknown>[]): IncidentBook {
    if (this.sightings.length === 0) return new IncidentBook([], () => DEFAULT_SETTINGS);
    const [open, resolved, tenants] = results.slice(results.length - 3);
    return new IncidentBook([...(open!.rows as IncidentRow[]), ...(resolved!.rows as IncidentRow[])], settingsOf(tenants!.rows as SettingsRow[]));
  }
}

/**
 * SQLite without statistics (pitcrew never runs ANALYZE) reads a tenant's open incidents through
 * `incidents_tenant_state` and filters the keys: every open incident of the tenant, per batch
 * (11 ms a batch at 10,000 open, bench/alerts.js), where the keys' own index finds the batch's few.
 */
function indexedBy(dialect: Dialect, index: 'incidents_open_key' | 'incidents_key_resolved'): string {
  return dialect === 'sqlite' ? `indexed by "${index}"` : '';
}

/** Tenants' settings by id, from their rows; a tenant not among them has the defaults. */
export function settingsOf(rows: readonly SettingsRow[]): (tenantId: string) => IncidentSettings {
  const byTenant = new Map(rows.map((row) => [row.id, { automationMs: Number(row.incident_automation_seconds) * 1000, quietMs: Number(row.incident_quiet_seconds) * 1000 }]));
  return (tenantId) => byTenant.get(tenantId) ?? DEFAULT_SETTINGS;
}
