import { randomUUID } from 'node:crypto';
import type { Kysely, Transaction } from 'kysely';
import { durableTransaction } from '../store/durable-transaction.js';
import type { Durability } from '../store/durability.js';
import { notFound } from '../errors/catalogue.js';
import { dropSchedule, syncSchedule } from './schedules.js';
import { newId } from '../store/ids.js';
import type { PageRequest } from '../store/pagination.js';
import { containsText } from '../store/search.js';
import { preparedQuery, preparedStatement } from '../store/prepared.js';
import { withUniqueName } from '../store/unique.js';
import type { Database, RuleRow } from '../store/schema.js';
import { withFlappingDefaults, type Rule } from './rule.js';
import { resolveRunbook, shownAction } from './runbook-refs.js';
import type { Approval, Flapping, RuleInput } from './schema.js';

type Db = Kysely<Database>;

export interface RuleFilter {
  enabled?: boolean;
  triggerType?: string;
  /** Case-insensitive substring of the name. */
  search?: string;
}

/**
 * What else a rule's transaction does once the rule is written: the route's audit entry, and for
 * a new rule what a folder above rules names (server/app.ts passes it): the incidents of the
 * alarm an alert rule is made for name it (incidents/rule-links.ts).
 */
export type RuleWritten = (tx: Transaction<Database>, rule: Rule) => Promise<void>;

export async function createRule(db: Db, durability: Durability, tenantId: string, input: RuleInput, now = Date.now(), onCreated?: RuleWritten): Promise<Rule> {
  const rule: Rule = {
    id: newId(now),
    tenantId,
    ...normalise(input, null),
    createdAt: now,
    updatedAt: now,
  };
  await durableTransaction(db, durability, async (tx) => {
    rule.action = await resolveRunbook(tx, tenantId, rule.action);
    await withUniqueName('rule', input.name, () => tx.insertInto('rules').values(toRow(rule)).execute());
    await syncSchedule(tx, rule, now);
    await onCreated?.(tx, rule);
  });
  return rule;
}

/** Read on every request about one rule: built once (store/prepared.ts). */
const liveRule = preparedQuery((db, id: string, tenantId: string) => db
  .selectFrom('rules')
  .selectAll()
  .where('id', '=', id)
  .where('tenant_id', '=', tenantId)
  .where('deleted_at', 'is', null));

export async function getRule(db: Kysely<Database>, tenantId: string, id: string): Promise<Rule> {
  const [row] = await liveRule(db, id, tenantId);
  if (!row) throw notFound('rule', id);
  return fromRow(row);
}

export async function listRules(db: Db, tenantId: string, filter: RuleFilter, page: PageRequest): Promise<Rule[]> {
  let query = db.selectFrom('rules').selectAll().where('tenant_id', '=', tenantId).where('deleted_at', 'is', null);
  if (filter.enabled !== undefined) query = query.where('enabled', '=', filter.enabled ? 1 : 0);
  if (filter.triggerType) query = query.where('trigger_type', '=', filter.triggerType);
  if (filter.search) query = query.where(containsText('name', filter.search));
  if (page.after) query = query.where('id', '>', page.after);
  const rows = await query.orderBy('id').limit(page.limit + 1).execute();
  return rows.map(fromRow);
}

/** Replaces the rule's settings with `input` (already merged and validated by the caller). */
export async function replaceRule(db: Db, durability: Durability, current: Rule, input: RuleInput, now = Date.now(), onWritten?: RuleWritten): Promise<Rule> {
  const rule: Rule = { ...current, ...normalise(input, current.triggerId), updatedAt: now };
  await durableTransaction(db, durability, async (tx) => {
    rule.action = await resolveRunbook(tx, current.tenantId, rule.action);
    const row = toRow(rule);
    await withUniqueName('rule', input.name, () => tx.executeQuery(ruleUpdate(db, row)));
    await syncSchedule(tx, rule, now, current);
    await onWritten?.(tx, rule);
  });
  return rule;
}

/** The columns a change of a rule writes, in the order `ruleUpdate` takes them. */
const UPDATED = ['name', 'enabled', 'trigger_type', 'trigger_id', 'integration_id', 'trigger', 'action', 'target', 'infrastructure_type', 'action_limit', 'flapping', 'updated_at', 'runbook_id', 'repository_id', 'approval'] as const;

/** Every change of a rule writes all its settings: built once (store/prepared.ts), a PATCH's one write. */
const preparedRuleUpdate = preparedStatement((db, id: string, ...values: unknown[]) => db
  .updateTable('rules')
  .set(Object.fromEntries(UPDATED.map((column, i) => [column, values[i]])) as Partial<RuleRow>)
  .where('id', '=', id)
  .where('deleted_at', 'is', null));

function ruleUpdate(db: Db, row: RuleRow) {
  return preparedRuleUpdate(db, row.id, ...UPDATED.map((column) => row[column]));
}

/** Soft delete: the rule stops triggering and leaves lists, its recorded events stay readable. */
export async function deleteRule(db: Db, durability: Durability, tenantId: string, id: string, now = Date.now(), onDeleted?: (tx: Transaction<Database>) => Promise<void>): Promise<void> {
  await durableTransaction(db, durability, async (tx) => {
    const result = await tx
      .updateTable('rules')
      .set({ deleted_at: now, trigger_id: null })
      .where('id', '=', id)
      .where('tenant_id', '=', tenantId)
      .where('deleted_at', 'is', null)
      .executeTakeFirst();
    if (Number(result.numUpdatedRows) === 0) throw notFound('rule', id);
    await dropSchedule(tx, id);
    await onDeleted?.(tx);
  });
}

export function ruleToInput(rule: Rule): RuleInput {
  return {
    name: rule.name,
    enabled: rule.enabled,
    trigger: rule.trigger,
    action: shownAction(rule.action),
    target: rule.target,
    infrastructureType: rule.infrastructureType as RuleInput['infrastructureType'],
    actionLimit: rule.actionLimit,
    flapping: rule.flapping,
    approval: rule.approval,
  };
}

function normalise(input: RuleInput, existingTriggerId: string | null) {
  return {
    name: input.name.trim(),
    enabled: input.enabled ?? true,
    trigger: input.trigger,
    // A webhook keeps its URL across edits; a rule that becomes a webhook gets a fresh one.
    triggerId: input.trigger.type === 'webhook' ? (existingTriggerId ?? randomUUID()) : null,
    action: input.action,
    target: input.target,
    infrastructureType: input.infrastructureType,
    actionLimit: input.actionLimit ? { onLimit: 'escalate' as const, ...input.actionLimit } : null,
    flapping: withFlappingDefaults(input.flapping),
    approval: input.approval ?? null,
  };
}

export function toRow(rule: Rule): RuleRow {
  return {
    id: rule.id,
    tenant_id: rule.tenantId,
    name: rule.name,
    enabled: rule.enabled ? 1 : 0,
    trigger_type: rule.trigger.type,
    trigger_id: rule.triggerId,
    integration_id: rule.trigger.type === 'alert' ? (rule.trigger.integrationId ?? null) : null,
    trigger: JSON.stringify(rule.trigger),
    action: JSON.stringify(rule.action),
    target: JSON.stringify(rule.target),
    infrastructure_type: rule.infrastructureType,
    action_limit: rule.actionLimit ? JSON.stringify(rule.actionLimit) : null,
    flapping: JSON.stringify(rule.flapping),
    created_at: rule.createdAt,
    updated_at: rule.updatedAt,
    deleted_at: null,
    runbook_id: runbookOf(rule)?.runbookId ?? null,
    repository_id: runbookOf(rule)?.repositoryId ?? null,
    approval: rule.approval ? JSON.stringify(rule.approval) : null,
  };
}

function runbookOf(rule: Rule): { runbookId?: string; repositoryId?: string } | undefined {
  return rule.action.type === 'script' || rule.action.type === 'cli' || rule.action.type === 'email_runbook' ? rule.action.runbook : undefined;
}

export function fromRow(row: RuleRow): Rule {
  return {
    id: row.id,
    tenantId: row.tenant_id,
    name: row.name,
    enabled: row.enabled === 1,
    trigger: JSON.parse(row.trigger),
    triggerId: row.trigger_id,
    action: JSON.parse(row.action),
    target: JSON.parse(row.target),
    infrastructureType: row.infrastructure_type,
    actionLimit: row.action_limit ? JSON.parse(row.action_limit) : null,
    // Rules stored before a setting existed get its default.
    flapping: withFlappingDefaults(JSON.parse(row.flapping) as Flapping),
    approval: row.approval ? (JSON.parse(row.approval) as Approval) : null,
    createdAt: row.created_at,
    updatedAt: row.updated_at,
  };
}

/** Whether the rule ever existed in the tenant (deleted rules keep their events readable). */
export async function ruleExists(db: Db, tenantId: string, ruleId: string): Promise<boolean> {
  const row = await db.selectFrom('rules').select('id').where('id', '=', ruleId).where('tenant_id', '=', tenantId).executeTakeFirst();
  return row !== undefined;
}
