import { CompiledQuery } from 'kysely';
import { hostKey, shortName } from '../engine/decide.js';
import type { Statements } from '../store/statements.js';
import type { Raise } from './raises.js';

/**
 * The hosts the batch's rules could target, or nothing to ask when no rule acts on hosts. Written
 * as text: built with Kysely it was ~4 % of the ingest benchmark's main thread (a CPU profile).
 */
export function candidateHostsQuery(statements: Statements, raises: Raise[]): CompiledQuery | undefined {
  const names = new Set<string>();
  const tags = new Set<string>();
  const tenants = new Set<string>();
  for (const raise of raises) {
    const { rule } = raise;
    if (!rule.enabled || !raise.occurrence.payload.act || raise.ignoredState) continue;
    tenants.add(rule.tenantId);
    if (rule.target.type === 'trigger_host' && raise.hostKey) names.add(raise.hostKey);
    if (rule.target.type === 'specific_host' && rule.target.hostname) names.add(hostKey(rule.target.hostname));
    if (rule.target.type === 'specific_tags') for (const tag of rule.target.tags ?? []) tags.add(tag);
  }
  // A name also finds the hosts it differs from only by domain (engine/decide.ts, findHost).
  const shortNames = new Set([...names].map(shortName));
  if (tenants.size === 0 || (names.size === 0 && tags.size === 0)) return undefined;
  const parameters: unknown[] = [...tenants];
  const inList = (values: Set<string>) => {
    const text = statements.list(values.size, parameters.length);
    parameters.push(...values);
    return text;
  };
  const either: string[] = [];
  if (names.size > 0) either.push(`"hostname_key" in (${inList(names)}) or "hostname_short" in (${inList(shortNames)})`);
  if (tags.size > 0) either.push(`"id" in (select "host_id" from "host_tags" where "tag" in (${inList(tags)}) and "tenant_id" in (${inList(tenants)}))`);
  const text = `select "id", "tenant_id", "hostname", "tags", "session_id", "last_picked_at", "cloud_instance_id" from "hosts" where "tenant_id" in (${statements.list(tenants.size)}) and (${either.join(' or ')})`;
  return CompiledQuery.raw(text, parameters);
}

