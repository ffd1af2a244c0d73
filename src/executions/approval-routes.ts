import { Type } from 'typebox';
import { IdParams, problems } from '../http/schemas.js';
import type { Api } from '../http/types.js';
import { access } from '../identity/access.js';
import { recordInChange } from '../identity/audit/recorder.js';
import type { Principal } from '../identity/principal.js';
import type { ExecutionRow } from '../store/schema.js';
import { PitcrewError, notFound } from '../errors/catalogue.js';
import { checkApprovalLink, type ApprovalLink } from './approval-link.js';
import { decideApproval, type ApprovalDeps, type Decider, type Verdict } from './approval-decision.js';
import { ExecutionView, presentExecution } from './presenter.js';
import { transitionsOf } from './repository.js';

const tags = ['executions'];

export interface ApprovalRouteDeps extends ApprovalDeps {
  /** After the commit: an approved run goes to its agent or the service's executor; the live page hears of the change. */
  decided(row: ExecutionRow): void;
  /** The key of the e-mail's signed links (approval-link.ts). */
  linkKey: Buffer;
}

const LinkQuery = Type.Object(
  { exp: Type.String({ maxLength: 12, description: 'epoch seconds the link is open until' }), sig: Type.String({ maxLength: 100 }) },
  { additionalProperties: false },
);

const DecisionBody = Type.Object(
  {
    comment: Type.Optional(Type.String({ maxLength: 2000, description: "why: kept in the execution's history and the audit log" })),
    link: Type.Optional(Type.Object({ exp: Type.String({ maxLength: 12 }), sig: Type.String({ maxLength: 100 }) }, {
      additionalProperties: false, description: "the e-mail's signed link the page was opened from: the decision is recorded as made from the e-mail",
    })),
  },
  { additionalProperties: false },
);

/**
 * Approve or reject an execution awaiting approval (docs/approvals.md). The role needed is the
 * rule's approval.role (default operator), checked on the execution; the route itself is open to
 * operators, the least role any approval names.
 */
export function registerApprovalRoutes(app: Api, deps: ApprovalRouteDeps): void {
  const route = (verdict: Verdict, status: 200 | 202, summary: string) => app.post(`/executions/:id/${verdict}`, {
    schema: {
      tags, ...access('operator'), summary,
      params: IdParams, body: DecisionBody, response: { [status]: ExecutionView, ...problems(400, 401, 403, 404, 409) },
    },
    // The comment is optional, and so is the body: a bare POST decides without one.
    preValidation: (request, _reply, done) => {
      request.body ??= {};
      done();
    },
  }, async (request, reply) => {
    const { link } = request.body;
    if (link) mustOpen(deps, request.principal.tenantId, request.params.id, link);
    const decider = { ...deciderOf(request.principal, request.body.comment), ...(link ? { via: 'email' as const } : {}) };
    const row = await decideApproval(deps, request.principal.tenantId, request.params.id, verdict, decider, async (tx, after) => {
      await recordInChange(request, deps.db, tx, presentExecution(after));
    });
    deps.decided(row);
    return reply.code(status).send(presentExecution(row, { transitions: await transitionsOf(deps.db, row.id), artifacts: [], snapshots: [] }));
  });
  route('approve', 202, 'Approve an execution awaiting approval: it is queued and runs once (409 when already decided, expired or cancelled, or its action limit is full)');
  route('reject', 200, 'Reject an execution awaiting approval: it ends rejected and never runs (409 when already decided)');

  // Reading only: the page the e-mail's link opens asks to confirm, then posts approve or reject.
  app.get('/executions/:id/approval-link', {
    schema: {
      tags, ...access('viewer'), summary: "Check an approval e-mail's signed link and read its execution (decides nothing)",
      params: IdParams, querystring: LinkQuery, response: { 200: ExecutionView, ...problems(400, 401, 403, 404) },
    },
  }, async (request) => {
    mustOpen(deps, request.principal.tenantId, request.params.id, request.query);
    const row = await deps.db.selectFrom('executions').selectAll().where('id', '=', request.params.id).where('tenant_id', '=', request.principal.tenantId).executeTakeFirst();
    if (!row) throw notFound('execution', request.params.id);
    return presentExecution(row, { transitions: await transitionsOf(deps.db, row.id), artifacts: [], snapshots: [] });
  });
}

/** A link signed for another tenant or execution, altered, or past the approval's deadline, is refused. */
function mustOpen(deps: ApprovalRouteDeps, tenantId: string, executionId: string, link: ApprovalLink): void {
  const check = checkApprovalLink(deps.linkKey, { tenantId, executionId }, link, deps.clock());
  if (check === 'expired') throw new PitcrewError('PITCREW_ERR_LINK_INVALID', `this approval link expired with the approval's deadline; open execution ${executionId} in pitcrew to see how it ended`);
  if (check === 'wrong') throw new PitcrewError('PITCREW_ERR_LINK_INVALID', `this approval link is not valid for execution ${executionId} in the tenant you are signed in to (altered, or meant for another tenant): sign in to the tenant the e-mail came from, or open the execution in pitcrew`);
}

/** A session's decision is the UI's; a token's, the API's. */
function deciderOf(principal: Principal, comment: string | undefined): Decider {
  const trimmed = comment?.trim();
  return { userId: principal.userId, email: principal.email, role: principal.role, via: principal.tokenId === null ? 'ui' : 'api', comment: trimmed ? trimmed : undefined };
}
