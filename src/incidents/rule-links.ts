import type { Transaction } from 'kysely';
import { alarmNamePattern } from '../rules/alarm-name.js';
import type { Rule } from '../rules/rule.js';
import type { Dialect } from '../store/database.js';
import type { Database } from '../store/schema.js';
import { ruleIncidentLinks } from './links.js';

/**
 * A rule created with an alert trigger that names an alarm (the dashboard's one-click automation
 * makes such rules) joins the rules of that alarm's incidents on its integration, open and
 * resolved, in the transaction that creates it (rules/repository.ts createRule). A trigger
 * without an alarm name, for every alert of its tool, is made for no alarm in particular and
 * links nothing.
 */
export async function linkRuleToIncidents(tx: Transaction<Database>, dialect: Dialect, rule: Rule): Promise<void> {
  if (rule.trigger.type !== 'alert' || rule.trigger.alarmName === undefined) return;
  const { integrationId, alarmName } = rule.trigger;
  const names = isExact(alarmName) ? [alarmName] : await matchingNames(tx, rule.tenantId, integrationId, alarmName);
  for (const query of ruleIncidentLinks(dialect, { tenantId: rule.tenantId, integrationId, alarmNames: names, ruleId: rule.id })) await tx.executeQuery(query);
}

/** A glob without wildcards matches one name, itself (rules/alarm-name.ts). */
function isExact(alarmName: string): boolean {
  return !/[*?]/.test(alarmName) && !/^\/.+\/i?$/.test(alarmName);
}

/** The integration's alarm names the pattern matches, among those its incidents have. */
async function matchingNames(tx: Transaction<Database>, tenantId: string, integrationId: string, alarmName: string): Promise<string[]> {
  const pattern = alarmNamePattern(alarmName);
  const rows = await tx.selectFrom('incidents').select('alarm_name').distinct().where('tenant_id', '=', tenantId).where('integration_id', '=', integrationId).execute();
  return rows.map((row) => row.alarm_name).filter((name) => pattern.test(name));
}
