import type { Kysely } from 'kysely';
import { decideApproval, type ApprovalDeps, type DecisionChannel, type Verdict } from '../executions/approval-decision.js';
import { presentExecution } from '../executions/presenter.js';
import { appendAuditIn } from '../identity/audit/repository.js';
import { isRole, type Role } from '../identity/roles.js';
import { normaliseEmail } from '../identity/users.js';
import type { Database, ExecutionRow } from '../store/schema.js';

/** What deciding from a chat needs: the decision's own, and what follows its commit (the run to its agent). */
export interface ChatDecisionDeps extends ApprovalDeps {
  decided(row: ExecutionRow): void;
}

/** The person a chat platform names by e-mail, as a member of the tenant; a disabled one is nobody. */
export interface ChatMember {
  id: string;
  email: string | null;
  role: Role;
}

export async function chatMember(db: Kysely<Database>, tenantId: string, email: string): Promise<ChatMember | undefined> {
  const row = await db
    .selectFrom('users')
    .innerJoin('memberships', 'memberships.user_id', 'users.id')
    .select(['users.id', 'users.email', 'memberships.role'])
    .where('users.email', '=', normaliseEmail(email))
    .where('users.disabled_at', 'is', null)
    .where('memberships.tenant_id', '=', tenantId)
    .executeTakeFirst();
  return row && isRole(row.role) ? { id: row.id, email: row.email, role: row.role } : undefined;
}

/**
 * A click in Slack or Teams decided as the member behind it: decideApproval's exactly-once decision,
 * with the audit entry (the execution before and after) in its transaction, then the run sent on.
 * A refusal (role, already decided, expired) is decideApproval's PitcrewError, for the caller to tell.
 */
export async function decideFromChat(
  deps: ChatDecisionDeps, member: ChatMember,
  click: { tenantId: string; executionId: string; verdict: Verdict; via: DecisionChannel; ip: string },
): Promise<ExecutionRow> {
  const before = await deps.db.selectFrom('executions').selectAll().where('id', '=', click.executionId).where('tenant_id', '=', click.tenantId).executeTakeFirst();
  const decider = { userId: member.id, email: member.email, role: member.role, via: click.via };
  const row = await decideApproval(deps, click.tenantId, click.executionId, click.verdict, decider, async (tx, after) => {
    await appendAuditIn(deps.db, tx, {
      tenantId: click.tenantId, at: deps.clock(), actor: { type: 'user', id: member.id, email: member.email }, via: click.via, ip: click.ip,
      action: `execution.${click.verdict}`, targetType: 'execution', targetId: click.executionId, before: before ? presentExecution(before) : null, after: presentExecution(after),
    });
  });
  deps.decided(row);
  return row;
}
