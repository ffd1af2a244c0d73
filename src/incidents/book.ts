import { hostKey } from '../engine/decide.js';
import type { AlarmObservation } from '../integrations/observation.js';
import { idAt } from '../store/ids.js';
import type { IncidentRow } from '../store/schema.js';

/** Executions listed on an incident's row; its `execution_count` counts them all. */
export const LISTED_EXECUTIONS = 100;

/** A tenant's incident settings (tenants.incident_*), in milliseconds. */
export interface IncidentSettings {
  /** A resolution within this long after a pitcrew fix ended is automation's. */
  automationMs: number;
  /** An incident a webhook call opened closes after this long without another call. */
  quietMs: number;
}

export const DEFAULT_SETTINGS: IncidentSettings = { automationMs: 3_600_000, quietMs: 1_800_000 };

/** What one source said of an alarm, with where and when pitcrew heard it. */
export interface Sighting {
  tenantId: string;
  /** Null for a webhook call (no integration). */
  integrationId: string | null;
  observation: AlarmObservation;
  /** When pitcrew received it: the incident's time where the tool gives none (`observation.at` null). */
  receivedAt: number;
  /**
   * How a repeat of what the incident already knows is told:
   * - `notification` (an integration's alert): by the alert's fingerprint (a re-sent notification
   *   has the same one), and by the tool's time when it gives one;
   * - `import` (a record read from the tool): by the tool's time alone, so a page read twice
   *   counts nothing twice;
   * - `call` (a webhook call): every call is an occurrence.
   */
  repeat: { by: 'notification'; fingerprint: string } | { by: 'import' } | { by: 'call' };
}

/** Where a sighting went: the incident it belongs to, or null when it was left alone (a stale or unknown resolution). */
export type Sighted = string | null;

interface Tracked {
  row: IncidentRow;
  /** The row's rule and execution ids, parsed at the first link (most rows read are never linked), written back by changes() once they changed. */
  lists?: { ruleIds: string[]; executionIds: string[]; changed: boolean };
  /** What the database holds: nothing yet (inserted at the end), or the row as read. */
  stored: 'no' | 'open' | 'resolved';
  changed: boolean;
}

/** An import's firing before the incidents pitcrew knows of its alarm: an incident once its resolution follows in the same page. */
interface Earlier {
  sighting: Sighting;
  openedAt: number;
  lastFiredAt: number;
  occurrences: number;
}

/**
 * The incidents of a batch of sightings, kept in memory from the rows read for them (the open
 * incidents of their keys and those resolved lately), then written at once: new rows, rows
 * touched, rows resolved. Pure: the ingest transaction (ingest/) and imports (apply.ts) share it,
 * so an alarm is one incident however pitcrew heard of it. The rules: docs/incidents.md.
 */
export class IncidentBook {
  private readonly byKey = new Map<string, Tracked[]>();
  private readonly byId = new Map<string, Tracked>();
  private readonly earlier = new Map<string, Earlier>();

  constructor(
    known: readonly IncidentRow[],
    private readonly settingsOf: (tenantId: string) => IncidentSettings,
    /** `import`: a firing older than the incidents known of its alarm waits in the page for its resolution; else it is left alone. */
    private readonly mode: 'ingest' | 'import' = 'ingest',
  ) {
    for (const row of known) this.track(row, row.state);
  }

  /** Applies one sighting, in the order they happened to arrive; returns the incident it belongs to. */
  sight(s: Sighting): Sighted {
    const scope = scopeOf(s.tenantId, s.integrationId, s.observation.incidentKey);
    const at = s.observation.at ?? s.receivedAt;
    let open = this.openOf(scope);
    // A webhook alarm quiet for longer than the tenant allows ended then: the call opens another.
    if (open && s.integrationId === null && s.receivedAt - open.row.last_seen_at > this.settingsOf(s.tenantId).quietMs) {
      this.closeQuiet(open);
      open = undefined;
    }
    return s.observation.state === 'firing' ? this.fire(scope, s, at, open) : this.resolve(scope, s, at, open);
  }

  /** Records the rules an incident's event was raised for and the executions it queued. */
  link(incidentId: string, ruleIds: readonly string[], executionIds: readonly string[]): void {
    const tracked = this.byId.get(incidentId);
    if (!tracked || (ruleIds.length === 0 && executionIds.length === 0)) return;
    const lists = (tracked.lists ??= { ruleIds: JSON.parse(tracked.row.rule_ids) as string[], executionIds: JSON.parse(tracked.row.execution_ids) as string[], changed: false });
    for (const id of ruleIds) {
      if (!lists.ruleIds.includes(id)) {
        lists.ruleIds.push(id);
        lists.changed = tracked.changed = true;
      }
    }
    if (executionIds.length > 0) {
      lists.executionIds.push(...executionIds.slice(0, Math.max(0, LISTED_EXECUTIONS - lists.executionIds.length)));
      tracked.row.execution_count += executionIds.length;
      lists.changed = tracked.changed = true;
    }
  }

  /**
   * Puts an alert (or an event: `part`) at the head of its incident's chain; returns the one it
   * follows, what the new row's `incident_previous_id` names (migration 0032).
   */
  chain(incidentId: string, part: 'alert' | 'event', id: string): string | null {
    const tracked = this.byId.get(incidentId);
    if (!tracked) return null;
    const { row } = tracked;
    tracked.changed = true;
    if (part === 'alert') {
      const previous = row.last_alert_id;
      row.last_alert_id = id;
      row.alert_count += 1;
      return previous;
    }
    const previous = row.last_event_id;
    row.last_event_id = id;
    row.event_count += 1;
    return previous;
  }

  /** Resolves every open incident of an integration whose key the tool no longer lists (an import's `openKeys`). */
  resolveAbsent(tenantId: string, integrationId: string, openKeys: ReadonlySet<string>, at: number): string[] {
    const resolved: string[] = [];
    for (const tracked of this.byId.values()) {
      const { row } = tracked;
      if (row.state !== 'open' || row.tenant_id !== tenantId || row.integration_id !== integrationId || openKeys.has(row.incident_key)) continue;
      this.settle(tracked, Math.max(at, row.opened_at), at);
      resolved.push(row.id);
    }
    return resolved;
  }

  /** Closes an open webhook incident quiet past the tenant's period (the closer's work, incidents/closer.ts). */
  closeIfQuiet(incidentId: string, now: number): boolean {
    const tracked = this.byId.get(incidentId);
    if (!tracked || tracked.row.state !== 'open' || tracked.row.integration_id !== null) return false;
    if (now - tracked.row.last_seen_at <= this.settingsOf(tracked.row.tenant_id).quietMs) return false;
    this.closeQuiet(tracked);
    return true;
  }

  /**
   * What to write: incidents to insert, and stored ones changed (`resolving`: open when read,
   * resolved now). `linked`: the ids of those whose rule or execution lists changed; the others
   * leave their lists as stored (writes.ts writes them only for these).
   */
  changes(): { inserts: IncidentRow[]; touched: IncidentRow[]; resolving: IncidentRow[]; linked: ReadonlySet<string> } {
    const inserts: IncidentRow[] = [];
    const touched: IncidentRow[] = [];
    const resolving: IncidentRow[] = [];
    const linked = new Set<string>();
    for (const tracked of this.byId.values()) {
      if (tracked.stored !== 'no' && !tracked.changed) continue;
      const { lists } = tracked;
      const row = lists?.changed ? { ...tracked.row, rule_ids: JSON.stringify(lists.ruleIds), execution_ids: JSON.stringify(lists.executionIds) } : { ...tracked.row };
      if (lists?.changed) linked.add(row.id);
      if (tracked.stored === 'no') inserts.push(row);
      else if (tracked.stored === 'open' && row.state === 'resolved') resolving.push(row);
      else if (tracked.changed) touched.push(row);
    }
    return { inserts, touched, resolving, linked };
  }

  private fire(scope: string, s: Sighting, at: number, open: Tracked | undefined): Sighted {
    // Without the tool's time, it is news of now: received a moment before another node's call that
    // opened the incident, it still belongs to it (times it was received in do not order commits).
    if (open && (at >= open.row.opened_at || s.observation.at === null)) return this.occurred(open, s, at);
    const covering = this.covering(scope, at, s);
    if (covering) return this.occurred(covering, s, at);
    const latest = this.latestOf(scope);
    if (open || (latest && at < latest.row.opened_at)) {
      // Before what is known of the alarm: a late repeat of a firing pitcrew never heard of, or an import's history.
      if (this.mode === 'import') this.heldEarlier(scope, s, at);
      return null;
    }
    return this.opened(scope, s, at);
  }

  private resolve(scope: string, s: Sighting, at: number, open: Tracked | undefined): Sighted {
    if (open && (at >= open.row.opened_at || s.observation.at === null)) {
      this.settle(open, at, s.receivedAt);
      return open.row.id;
    }
    const earlier = this.earlier.get(scope);
    if (earlier && at >= earlier.openedAt) {
      this.earlier.delete(scope);
      const tracked = this.opened(scope, earlier.sighting, earlier.openedAt);
      const incident = this.byId.get(tracked!)!;
      incident.row.occurrences = earlier.occurrences;
      incident.row.last_fired_at = earlier.lastFiredAt;
      this.settle(incident, at, s.receivedAt);
      return incident.row.id;
    }
    // A repeat of a resolution already recorded, or one of a firing pitcrew never heard of: nothing changes.
    return this.covering(scope, at, s)?.row.id ?? this.latestResolvedBefore(scope, at)?.row.id ?? null;
  }

  /** A firing of a known incident: an occurrence unless it repeats what the incident already counted. */
  private occurred(tracked: Tracked, s: Sighting, at: number): string {
    const { row } = tracked;
    const news = isNew(row, s);
    // An import reading again what is known changes nothing, not even when pitcrew last heard of it.
    if (s.receivedAt > row.last_seen_at && row.state === 'open' && (news || s.repeat.by !== 'import')) {
      row.last_seen_at = s.receivedAt;
      tracked.changed = true;
    }
    if (news) {
      row.occurrences += 1;
      row.last_fired_at = Math.max(row.last_fired_at, at);
      if (s.repeat.by === 'notification') row.last_fingerprint = s.repeat.fingerprint;
      if (s.observation.severity !== null && row.state === 'open') row.severity = s.observation.severity;
      tracked.changed = true;
    }
    return row.id;
  }

  private opened(scope: string, s: Sighting, at: number): string {
    const o = s.observation;
    const row: IncidentRow = {
      id: idAt(at),
      tenant_id: s.tenantId,
      integration_id: s.integrationId,
      incident_key: o.incidentKey,
      state: 'open',
      alarm_name: o.alarmName,
      severity: o.severity,
      hostname: o.hostname,
      host_key: o.hostname ? hostKey(o.hostname) : '',
      opened_at: at,
      resolved_at: null,
      last_seen_at: s.receivedAt,
      last_fired_at: at,
      last_fingerprint: s.repeat.by === 'notification' ? s.repeat.fingerprint : null,
      occurrences: 1,
      resolved_by: null,
      resolved_by_user: null,
      last_fix_at: null,
      rule_ids: '[]',
      execution_ids: '[]',
      execution_count: 0,
      last_alert_id: null,
      alert_count: 0,
      last_event_id: null,
      event_count: 0,
    };
    this.track(row, 'no', scope);
    return row.id;
  }

  /** Resolved at `at`: automation's when a pitcrew fix ended within the tenant's window before it, else the tool's. */
  private settle(tracked: Tracked, at: number, receivedAt: number): void {
    const { row } = tracked;
    const fixAt = row.last_fix_at;
    const { automationMs } = this.settingsOf(row.tenant_id);
    row.state = 'resolved';
    row.resolved_at = Math.max(at, row.opened_at);
    row.resolved_by = fixAt !== null && fixAt <= row.resolved_at && row.resolved_at - fixAt <= automationMs ? 'automation' : 'tool';
    row.last_seen_at = Math.max(row.last_seen_at, receivedAt);
    tracked.changed = true;
  }

  /**
   * A webhook incident's quiet close: it ended when pitcrew last heard of it, or when a fix of it
   * ended after that (the fix is then what ended it).
   */
  private closeQuiet(tracked: Tracked): void {
    const { row } = tracked;
    const end = Math.max(row.last_seen_at, row.last_fix_at ?? 0);
    this.settle(tracked, end, row.last_seen_at);
  }

  private heldEarlier(scope: string, s: Sighting, at: number): void {
    const held = this.earlier.get(scope);
    if (!held) {
      this.earlier.set(scope, { sighting: s, openedAt: at, lastFiredAt: at, occurrences: 1 });
    } else if (at > held.lastFiredAt) {
      held.lastFiredAt = at;
      held.occurrences += 1;
    }
  }

  private openOf(scope: string): Tracked | undefined {
    return this.byKey.get(scope)?.find((t) => t.row.state === 'open');
  }

  /** The incident whose span holds `at`, or a resolved one a notification's fingerprint repeats. */
  private covering(scope: string, at: number, s: Sighting): Tracked | undefined {
    const all = this.byKey.get(scope) ?? [];
    const fingerprint = s.repeat.by === 'notification' ? s.repeat.fingerprint : undefined;
    return all.find((t) => t.row.opened_at <= at && (t.row.state === 'open' || at <= t.row.resolved_at!))
      ?? (fingerprint === undefined ? undefined : all.find((t) => t.row.last_fingerprint === fingerprint));
  }

  private latestOf(scope: string): Tracked | undefined {
    let latest: Tracked | undefined;
    for (const t of this.byKey.get(scope) ?? []) if (!latest || t.row.opened_at > latest.row.opened_at) latest = t;
    return latest;
  }

  private latestResolvedBefore(scope: string, at: number): Tracked | undefined {
    let latest: Tracked | undefined;
    for (const t of this.byKey.get(scope) ?? []) {
      if (t.row.state === 'resolved' && t.row.opened_at <= at && (!latest || t.row.opened_at > latest.row.opened_at)) latest = t;
    }
    return latest;
  }

  private track(row: IncidentRow, stored: Tracked['stored'], scope = scopeOf(row.tenant_id, row.integration_id, row.incident_key)): void {
    const tracked: Tracked = {
      row: { ...row },
      stored,
      changed: false,
    };
    const list = this.byKey.get(scope);
    if (list) list.push(tracked);
    else this.byKey.set(scope, [tracked]);
    this.byId.set(row.id, tracked);
  }
}

/**
 * Whether a firing is news to the incident: a webhook call always is; a notification unless its
 * fingerprint is the last one counted or the tool's time is not after the last firing's; an
 * import's record only when the tool's time is after the last firing's.
 */
function isNew(row: IncidentRow, s: Sighting): boolean {
  const at = s.observation.at;
  switch (s.repeat.by) {
    case 'call':
      return true;
    case 'notification':
      return s.repeat.fingerprint !== row.last_fingerprint && (at === null || at > row.last_fired_at);
    case 'import':
      return at !== null && at > row.last_fired_at;
  }
}

/** An alarm's identity within a tenant: its integration (none for a webhook call) and its key. */
export function scopeOf(tenantId: string, integrationId: string | null, incidentKey: string): string {
  return `${tenantId}\n${integrationId ?? ''}\n${incidentKey}`;
}
