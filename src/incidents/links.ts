import { CompiledQuery } from 'kysely';
import type { Dialect } from '../store/database.js';
import { LISTED_EXECUTIONS } from './book.js';

/**
 * An incident a person acted on (Troubleshoot now, Fix now: ingress/incident-runs.ts): the run's
 * event and executions join the incident's, and the rule that ran (none for a troubleshooting run, whose
 * rule is pitcrew's own) its rules. Statements run in the ingest transaction after the
 * book's writes (incidents/writes.ts), so they add to what the book wrote of the same incident in
 * the same batch: appended in SQL, not replaced from what was read. The executions listed stop at
 * the first LISTED_EXECUTIONS, as the book's do; the count goes on.
 */
export function incidentLinkWrites(dialect: Dialect, link: { tenantId: string; incidentId: string; eventId: string; ruleId: string | null; executionIds: readonly string[] }): CompiledQuery[] {
  const where = (n: number) => `where "id" = ${param(dialect, n)} and "tenant_id" = ${param(dialect, n + 1)}`;
  // The run's event goes to the head of the incident's events (migration 0032), after what the book wrote.
  const writes = [
    CompiledQuery.raw(
      `update "events" set "incident_previous_id" = (select "last_event_id" from "incidents" ${where(1)}) where "id" = ${param(dialect, 3)}`,
      [link.incidentId, link.tenantId, link.eventId],
    ),
    CompiledQuery.raw(
      `update "incidents" set "last_event_id" = ${param(dialect, 1)}, "event_count" = "event_count" + 1 ${where(2)}`,
      [link.eventId, link.incidentId, link.tenantId],
    ),
  ];
  for (const executionId of link.executionIds) {
    writes.push(CompiledQuery.raw(
      `update "incidents" set "execution_ids" = ${appendCapped(dialect, '"execution_ids"', 1)}, "execution_count" = "execution_count" + 1 ${where(2)}`,
      [executionId, link.incidentId, link.tenantId],
    ));
  }
  if (link.ruleId !== null) writes.push(...addRule(dialect, link.ruleId, '"id" = ? and "tenant_id" = ?', [link.incidentId, link.tenantId]));
  return writes;
}

/**
 * A rule made for an alarm (one-click automation, or any alert rule created for it): the alarm's
 * incidents on its integration name it among their rules, so the dashboard shows the alarm as
 * automated and the analytics can tell its incidents before the rule from those after.
 * `alarmNames`: the names the rule's trigger matches, exactly.
 */
export function ruleIncidentLinks(dialect: Dialect, link: { tenantId: string; integrationId: string; alarmNames: readonly string[]; ruleId: string }): CompiledQuery[] {
  if (link.alarmNames.length === 0) return [];
  // (tenant_id, alarm_name, id) is indexed (migration 0026): each name is a range of it.
  const names = link.alarmNames.map(() => '?').join(', ');
  return addRule(dialect, link.ruleId, `"tenant_id" = ? and "alarm_name" in (${names}) and "integration_id" = ?`, [link.tenantId, ...link.alarmNames, link.integrationId]);
}

/**
 * Adds `ruleId` to the rule ids of the incidents `where` names (its parameters written `?`),
 * those that do not hold it yet.
 */
function addRule(dialect: Dialect, ruleId: string, where: string, parameters: readonly unknown[]): CompiledQuery[] {
  if (dialect === 'postgres') {
    let n = 1;
    const numbered = where.replace(/\?/g, () => `$${++n}`);
    return [CompiledQuery.raw(`update "incidents" set "rule_ids" = ("rule_ids"::jsonb || jsonb_build_array($1::text))::text where ${numbered} and not ("rule_ids"::jsonb @> jsonb_build_array($1::text))`, [ruleId, ...parameters])];
  }
  return [CompiledQuery.raw(
    `update "incidents" set "rule_ids" = json_insert("rule_ids", '$[#]', ?) where ${where} and not exists (select 1 from json_each("incidents"."rule_ids") where "value" = ?)`,
    [ruleId, ...parameters, ruleId],
  )];
}

function param(dialect: Dialect, n: number): string {
  return dialect === 'postgres' ? `$${n}` : '?';
}

/** The JSON array text in `column` with parameter `n` (a string) appended, unless it holds LISTED_EXECUTIONS already. */
function appendCapped(dialect: Dialect, column: string, n: number): string {
  return dialect === 'postgres'
    ? `case when jsonb_array_length(${column}::jsonb) >= ${LISTED_EXECUTIONS} then ${column} else (${column}::jsonb || jsonb_build_array($${n}::text))::text end`
    : `case when json_array_length(${column}) >= ${LISTED_EXECUTIONS} then ${column} else json_insert(${column}, '$[#]', ?) end`;
}

