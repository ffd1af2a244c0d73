import { CompiledQuery } from 'kysely';
import type { Rule } from '../rules/rule.js';
import { fromRow } from '../rules/repository.js';
import type { RuleRow } from '../store/schema.js';
import type { Statements } from '../store/statements.js';
import { parseScopes } from '../tenants/scopes.js';
import { apiKeyOf, type Occurrence } from './occurrence.js';

interface KeyRow {
  id: string;
  last_used_at: number | null;
  scopes: string;
}

/**
 * What a batch's occurrences rest on, read again in its transaction whatever any cache holds:
 * the API keys they carried and the rules they name. A revoked key or a deleted rule is known
 * here from the next commit on, on every node.
 */
export class BatchReads {
  private readonly liveKeys: KeyRow[];
  private readonly webhookKeys: Set<string>;
  private readonly byTrigger = new Map<string, Rule>();
  private readonly byId = new Map<string, Rule>();

  constructor(keyRows: readonly KeyRow[], ruleRows: readonly RuleRow[]) {
    this.liveKeys = [...keyRows];
    this.webhookKeys = new Set(keyRows.filter((k) => parseScopes(k.scopes).includes('webhook')).map((k) => k.id));
    for (const row of ruleRows) {
      const rule = fromRow(row);
      this.byId.set(rule.id, rule);
      if (row.trigger_id) this.byTrigger.set(row.trigger_id, rule);
    }
  }

  /** The queries to begin the transaction with; the keys' only when an occurrence carried one. */
  static queries(statements: Statements, batch: readonly Occurrence[]): { keys?: CompiledQuery; rules: CompiledQuery } {
    const keyIds = unique(batch.map(apiKeyOf));
    const triggerIds = unique(batch.map((o) => (o.rule.by === 'trigger' ? o.rule.triggerId : undefined)));
    const ruleIds = unique(batch.map((o) => (o.rule.by === 'rule' ? o.rule.ruleId : undefined)));
    const parameters: string[] = [];
    const either: string[] = [];
    if (triggerIds.length > 0) either.push(`"trigger_id" in (${statements.list(triggerIds.length)})`);
    if (ruleIds.length > 0) either.push(`"id" in (${statements.list(ruleIds.length, triggerIds.length)})`);
    parameters.push(...triggerIds, ...ruleIds);
    const rules = CompiledQuery.raw(`select * from "rules" where (${either.join(' or ')}) and "deleted_at" is null`, parameters);
    if (keyIds.length === 0) return { rules };
    const keys = CompiledQuery.raw(`select "id", "last_used_at", "scopes" from "api_keys" where "id" in (${statements.list(keyIds.length)}) and "revoked_at" is null`, keyIds);
    return { keys, rules };
  }

  /** Why the occurrence's credential no longer holds, if it does not. */
  refusal(occurrence: Occurrence): 'revoked_key' | 'key_lacks_scope' | undefined {
    const keyId = apiKeyOf(occurrence);
    if (keyId === undefined || this.webhookKeys.has(keyId)) return undefined;
    // Unrevoked but narrowed since the caller's node cached it.
    return this.liveKeys.some((k) => k.id === keyId) ? 'key_lacks_scope' : 'revoked_key';
  }

  /** The rule the occurrence raises, if it exists in the occurrence's own tenant. */
  rule(occurrence: Occurrence): Rule | undefined {
    const selector = occurrence.rule;
    const rule = selector.by === 'trigger' ? this.byTrigger.get(selector.triggerId) : this.byId.get(selector.ruleId);
    return rule && rule.tenantId === occurrence.tenantId ? rule : undefined;
  }

  /** The rule, when the occurrence is allowed to raise it: what is decided at all. */
  admitted(occurrence: Occurrence): Rule | undefined {
    return this.refusal(occurrence) ? undefined : this.rule(occurrence);
  }

  /** Keys used in this batch: their last-used time is refreshed with its writes. */
  usedKeys(): KeyRow[] {
    return this.liveKeys.filter((k) => this.webhookKeys.has(k.id));
  }
}

function unique(values: Array<string | undefined>): string[] {
  return [...new Set(values.filter((v): v is string => v !== undefined))];
}
