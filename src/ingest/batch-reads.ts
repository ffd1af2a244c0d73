import { CompiledQuery } from 'kysely';
import { matchesAlert } from '../engine/alert-match.js';
import { assertNever } from '../errors/assert-never.js';
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
  private readonly byIntegration = new Map<string, Rule[]>();

  constructor(keyRows: readonly KeyRow[], ruleRows: readonly RuleRow[]) {
    this.liveKeys = [...keyRows];
    this.webhookKeys = new Set(keyRows.filter((k) => parseScopes(k.scopes).includes('webhook')).map((k) => k.id));
    for (const row of ruleRows) {
      const rule = fromRow(row);
      this.byId.set(rule.id, rule);
      if (row.trigger_id) this.byTrigger.set(row.trigger_id, rule);
      if (row.integration_id) this.byIntegration.set(row.integration_id, [...(this.byIntegration.get(row.integration_id) ?? []), rule]);
    }
  }

  /** The queries to begin the transaction with; the keys' only when an occurrence carried one. */
  static queries(statements: Statements, batch: readonly Occurrence[]): { keys?: CompiledQuery; rules: CompiledQuery } {
    const keyIds = unique(batch.map(apiKeyOf));
    const triggerIds = unique(batch.map((o) => (o.rule.by === 'trigger' ? o.rule.triggerId : undefined)));
    const ruleIds = unique(batch.map((o) => (o.rule.by === 'rule' ? o.rule.ruleId : undefined)));
    const integrationIds = unique(batch.map((o) => (o.rule.by === 'integration' ? o.rule.integrationId : undefined)));
    const parameters: string[] = [];
    const either: string[] = [];
    const inList = (values: string[]) => {
      const text = statements.list(values.length, parameters.length);
      parameters.push(...values);
      return text;
    };
    if (triggerIds.length > 0) either.push(`"trigger_id" in (${inList(triggerIds)})`);
    if (ruleIds.length > 0) either.push(`"id" in (${inList(ruleIds)})`);
    // A deleted integration's rules no longer fire, whatever its caller's node still knew of it.
    if (integrationIds.length > 0) either.push(`"integration_id" in (select "id" from "integrations" where "id" in (${inList(integrationIds)}) and "deleted_at" is null)`);
    // A batch of composed runs alone names no stored rule: the read finds nothing, as it must.
    const rules = CompiledQuery.raw(`select * from "rules" where (${either.length > 0 ? either.join(' or ') : '1 = 0'}) and "deleted_at" is null`, parameters);
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

  /** The rules the occurrence raises, in its own tenant: the one it names, or an integration's that match its alert. */
  rules(occurrence: Occurrence): Rule[] {
    const selector = occurrence.rule;
    const own = (rule: Rule | undefined) => (rule && rule.tenantId === occurrence.tenantId ? [rule] : []);
    switch (selector.by) {
      case 'trigger':
        return own(this.byTrigger.get(selector.triggerId));
      case 'rule':
        return own(this.byId.get(selector.ruleId));
      case 'composed':
        return own(selector.rule);
      case 'integration':
        return (this.byIntegration.get(selector.integrationId) ?? []).filter((rule) => rule.tenantId === occurrence.tenantId && rule.trigger.type === 'alert' && matchesAlert(rule.trigger, selector.alert));
      default:
        return assertNever(selector);
    }
  }

  /** The rules, when the occurrence is allowed to raise them: what is decided at all. */
  admitted(occurrence: Occurrence): Rule[] {
    return this.refusal(occurrence) ? [] : this.rules(occurrence);
  }

  /** Keys used in this batch: their last-used time is refreshed with its writes. */
  usedKeys(): KeyRow[] {
    return this.liveKeys.filter((k) => this.webhookKeys.has(k.id));
  }
}

function unique(values: Array<string | undefined>): string[] {
  return [...new Set(values.filter((v): v is string => v !== undefined))];
}
