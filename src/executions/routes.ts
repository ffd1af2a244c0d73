import { Type } from 'typebox';
import { PitcrewError, notFound } from '../errors/catalogue.js';
import { IdParams, PageQuery, pageOf, problems } from '../http/schemas.js';
import { access } from '../identity/access.js';
import type { Api } from '../http/types.js';
import { snapshotsOfExecution } from '../snapshots/repository.js';
import { pageRequest, toPage } from '../store/pagination.js';
import { ExecutionView, presentExecution } from './presenter.js';
import { artifactsOf, getExecution, listExecutions, transitionsOf } from './repository.js';
import { EXECUTION_STATES, isTerminal, type ExecutionState } from './states.js';
import type { ExecutionLedger } from './ledger.js';
import { streamExecution, type StreamDeps } from './stream.js';

const tags = ['executions'];

export interface ExecutionRouteDeps extends StreamDeps {
  ledger: ExecutionLedger;
  /** Tells the agent of the host to cancel, whichever service node it is connected to. */
  /** Stops a running execution: its agent (hostId), or the node running it for the service (null). */
  cancelRunning(hostId: string | null, executionId: string): void;
}

export function registerExecutionRoutes(app: Api, deps: ExecutionRouteDeps): void {
  const { db } = deps;

  app.get('/executions', {
    schema: {
      tags, ...access('viewer'), summary: 'Executions, newest first',
      querystring: Type.Object({
        ...PageQuery,
        ruleId: Type.Optional(Type.String({ format: 'uuid' })),
        eventId: Type.Optional(Type.String({ format: 'uuid' })),
        hostId: Type.Optional(Type.String({ format: 'uuid' })),
        hostname: Type.Optional(Type.String({ maxLength: 253 })),
        state: Type.Optional(Type.Enum([...EXECUTION_STATES])),
      }, { additionalProperties: false }),
      response: { 200: pageOf(ExecutionView), ...problems(400, 401) },
    },
  }, async (request) => {
    const page = pageRequest(request.query);
    const { ruleId, eventId, hostId, hostname, state } = request.query;
    const rows = await listExecutions(db, request.principal.tenantId, { ruleId, eventId, hostId, hostname, state }, page);
    return toPage(rows, page, (row) => presentExecution(row));
  });

  app.get('/executions/:id', {
    schema: {
      tags, ...access('viewer'), summary: 'One execution with its output, artifacts and the story of its states',
      params: IdParams, response: { 200: ExecutionView, ...problems(400, 401, 404) },
    },
  }, async (request) => {
    const row = await getExecution(db, request.principal.tenantId, request.params.id);
    return presentExecution(row, { transitions: await transitionsOf(db, row.id), artifacts: await artifactsOf(db, row.id), snapshots: await snapshotsOfExecution(db, row.tenant_id, row) });
  });

  app.post('/executions/:id/cancel', {
    schema: {
      tags, ...access('operator'),
      summary: 'Cancel: a queued execution ends at once; a running one is stopped by its agent (its process group is killed)',
      params: IdParams, response: { 202: ExecutionView, ...problems(400, 401, 404, 409) },
    },
  }, async (request, reply) => {
    const { tenantId } = request.principal;
    const row = await getExecution(db, tenantId, request.params.id);
    const state = row.state as ExecutionState;
    if (isTerminal(state)) throw new PitcrewError('PITCREW_ERR_CONFLICT', `execution ${row.id} already ended (${state}); there is nothing to cancel`);
    if (state === 'queued' || state === 'awaiting_approval') {
      const reason = state === 'queued' ? 'cancelled before it reached the host' : 'cancelled while it waited for approval; it never ran';
      const moved = await deps.ledger.move([row.id], 'cancelled', reason, [state]);
      if (moved.length === 0) return reply.code(202).send(presentExecution(await getExecution(db, tenantId, row.id)));
    } else {
      await db.updateTable('executions').set({ cancel_requested_at: Date.now() }).where('id', '=', row.id).where('cancel_requested_at', 'is', null).execute();
      deps.cancelRunning(row.host_id, row.id);
    }
    return reply.code(202).send(presentExecution(await getExecution(db, tenantId, row.id)));
  });

  app.get('/executions/:id/stream', {
    schema: {
      tags, ...access('viewer'),
      summary: 'Live output as Server-Sent Events: `output` {stream, chunk}, `state` {state}, and `end` with the stored execution',
      params: IdParams, produces: ['text/event-stream'], response: { ...problems(400, 401, 404) },
    },
  }, async (request, reply) => streamExecution(deps, request, reply, await getExecution(db, request.principal.tenantId, request.params.id)));

  app.get('/executions/:id/artifacts/:artifactId', {
    schema: {
      tags, ...access('viewer'), summary: 'Download a file a diagnostics run collected',
      params: Type.Object({ id: Type.String({ format: 'uuid' }), artifactId: Type.String({ format: 'uuid' }) }),
      produces: ['application/octet-stream'], response: { ...problems(400, 401, 404) },
    },
  }, async (request, reply) => {
    await getExecution(db, request.principal.tenantId, request.params.id);
    const artifact = await db.selectFrom('execution_artifacts').select(['name', 'content']).where('id', '=', request.params.artifactId).where('execution_id', '=', request.params.id).executeTakeFirst();
    if (!artifact) throw notFound('artifact', request.params.artifactId);
    return reply
      .type('application/octet-stream')
      .header('Content-Disposition', `attachment; filename="${artifact.name.replace(/["\\\r\n]/g, '_')}"`)
      .send(Buffer.from(artifact.content, 'base64'));
  });
}
