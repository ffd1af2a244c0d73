import type { IncidentRow } from '../store/schema.js';
import type { IncidentView } from './schema.js';

/** An incident row as the API shows it: only these fields (DESIGN.md §7). */
export function presentIncident(row: IncidentRow): IncidentView {
  const resolvedAt = row.resolved_at === null ? null : Number(row.resolved_at);
  return {
    id: row.id,
    state: row.state,
    alarmName: row.alarm_name,
    severity: row.severity,
    hostname: row.hostname,
    integrationId: row.integration_id,
    fingerprint: row.incident_key,
    openedAt: iso(row.opened_at),
    resolvedAt: resolvedAt === null ? null : iso(resolvedAt),
    resolutionSeconds: resolvedAt === null ? null : (resolvedAt - Number(row.opened_at)) / 1000,
    occurrences: Number(row.occurrences),
    resolvedBy: row.resolved_by,
    resolvedByUser: row.resolved_by_user,
    lastSeenAt: iso(row.last_seen_at),
    ruleIds: JSON.parse(row.rule_ids) as string[],
    executionIds: JSON.parse(row.execution_ids) as string[],
    executionCount: Number(row.execution_count),
  };
}

function iso(ms: number): string {
  return new Date(Number(ms)).toISOString();
}
