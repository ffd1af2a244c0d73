import type { Kysely } from 'kysely';
import type { ActionKinds } from '../actions/kinds.js';
import { decide, type Decision } from '../engine/decide.js';
import { hostsByTenant, type HostCandidate } from '../engine/host-facts.js';
import type { Rule } from '../rules/rule.js';
import type { Dialect } from '../store/database.js';
import type { Database } from '../store/schema.js';
import { Statements } from '../store/statements.js';
import { candidateHostsQuery } from './candidate-hosts.js';
import type { Occurrence } from './occurrence.js';
import { eventFactsOf, raiseOf } from './raises.js';

export interface WhatIfDeps {
  db: Kysely<Database>;
  dialect: Dialect;
  kinds: ActionKinds;
}

/**
 * What the ingest would decide for each occurrence on this rule if it came now, storing nothing:
 * the rule's reading of it (raises.ts), the hosts it could target read with the writer's own
 * query, and decide() with the rule's action kind, as the writer does in its transaction. So a
 * preview says `no_target` with the ingest's reason when no host matches. Without the rule's
 * history: flapping, the action limit and repeats are not counted (each occurrence as if alone).
 */
export async function decideWithoutStoring(deps: WhatIfDeps, rule: Rule, occurrences: Occurrence[]): Promise<Decision[]> {
  const raises = occurrences.map((occurrence) => raiseOf(occurrence, rule));
  const query = candidateHostsQuery(new Statements(deps.dialect), raises);
  const rows = query ? ((await deps.db.executeQuery(query)).rows as HostCandidate[]) : [];
  const hosts = hostsByTenant(rows).get(rule.tenantId) ?? [];
  const kind = deps.kinds.of(rule.action.type);
  return raises.map((raise) => decide(rule, eventFactsOf(raise), hosts, kind));
}
