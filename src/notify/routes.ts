import { Type } from 'typebox';
import { PitcrewError } from '../errors/catalogue.js';
import { IdParams, PageQuery, pageOf, problems } from '../http/schemas.js';
import { access } from '../identity/access.js';
import type { Kysely } from 'kysely';
import type { Api } from '../http/types.js';
import { pageRequest, toPage } from '../store/pagination.js';
import type { Database } from '../store/schema.js';
import { listAttempts } from './attempts.js';
import { createChannel, deleteChannel, getChannel, listChannels, updateChannel } from './channels.js';
import type { Notifier } from './notifier.js';
import { presentAttempt, presentChannel } from './presenter.js';
import { AttemptView, ChannelInput, ChannelPatch, ChannelView, TestResultView } from './schema.js';
import type { SecretBox } from '../identity/secret-box.js';

const tags = ['channels'];

/** Notification channels (docs/notifications.md). Secrets go in, never come out. */
export function registerChannelRoutes(app: Api, { db, box, notifier }: { db: Kysely<Database>; box: SecretBox; notifier: Notifier }): void {

  app.post('/channels', {
    schema: {
      tags, ...access('admin'), summary: 'Create a notification channel (email, Slack, Teams, Mattermost, Google Chat, signed webhook)',
      body: ChannelInput, response: { 201: ChannelView, ...problems(400, 401, 409) },
    },
  }, async (request, reply) => {
    const row = await createChannel(db, box, request.principal.tenantId, request.body);
    return reply.code(201).header('Location', `/api/v1/channels/${row.id}`).send(presentChannel(row, box));
  });

  app.get('/channels', {
    schema: {
      tags, ...access('viewer'), summary: 'List channels (oldest first) with their last delivery and last error',
      querystring: Type.Object({ ...PageQuery }, { additionalProperties: false }),
      response: { 200: pageOf(ChannelView), ...problems(400, 401) },
    },
  }, async (request) => {
    const page = pageRequest(request.query);
    return toPage(await listChannels(db, request.principal.tenantId, page), page, (row) => presentChannel(row, box));
  });

  app.get('/channels/:id', {
    schema: { tags, ...access('viewer'), summary: 'Get a channel', params: IdParams, response: { 200: ChannelView, ...problems(400, 401, 404) } },
  }, async (request) => presentChannel(await getChannel(db, request.principal.tenantId, request.params.id), box));

  app.patch('/channels/:id', {
    schema: {
      tags, ...access('admin'), summary: 'Change a channel: given fields replace stored ones; a secret left out of config is kept',
      params: IdParams, body: ChannelPatch, response: { 200: ChannelView, ...problems(400, 401, 404, 409) },
    },
  }, async (request) => {
    const current = await getChannel(db, request.principal.tenantId, request.params.id);
    return presentChannel(await updateChannel(db, box, current, request.body), box);
  });

  app.delete('/channels/:id', {
    schema: { tags, ...access('admin'), summary: 'Delete a channel and what it still had to send', params: IdParams, response: { 204: Type.Null(), ...problems(400, 401, 404) } },
  }, async (request, reply) => {
    await deleteChannel(db, request.principal.tenantId, request.params.id);
    return reply.code(204).send(null);
  });

  app.post('/channels/:id/test', {
    schema: {
      tags, ...access('operator'),
      summary: 'Send a test message now (whatever the mode); 502 with the receiver’s answer when it is not delivered',
      params: IdParams, response: { 200: TestResultView, ...problems(400, 401, 404, 502) },
    },
  }, async (request) => {
    const row = await getChannel(db, request.principal.tenantId, request.params.id);
    const result = await notifier.sendTest(row);
    if (!result.ok) {
      throw new PitcrewError('PITCREW_ERR_CHANNEL_DELIVERY_FAILED', `the test message was not delivered to channel "${row.name}": ${result.error}`);
    }
    return { ok: true as const, status: result.status, durationMs: result.durationMs };
  });

  app.get('/channels/:id/attempts', {
    schema: {
      tags, ...access('viewer'), summary: 'Every delivery attempt of a channel, newest first',
      params: IdParams, querystring: Type.Object({ ...PageQuery }, { additionalProperties: false }),
      response: { 200: pageOf(AttemptView), ...problems(400, 401, 404) },
    },
  }, async (request) => {
    const row = await getChannel(db, request.principal.tenantId, request.params.id);
    const page = pageRequest(request.query);
    return toPage(await listAttempts(db, row.id, page), page, presentAttempt);
  });
}
