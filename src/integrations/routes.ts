import type { Kysely } from 'kysely';
import { Type } from 'typebox';
import type { SecretBox } from '../identity/secret-box.js';
import { IdParams, PageQuery, pageOf, problems } from '../http/schemas.js';
import { access } from '../identity/access.js';
import { baseUrl, type Api } from '../http/types.js';
import { pageRequest, toPage } from '../store/pagination.js';
import type { Database } from '../store/schema.js';
import { AlertView, listAlerts, presentAlert } from './alert-log.js';
import { presentIntegration } from './presenter.js';
import { createIntegration, deleteIntegration, getIntegration, listIntegrations, updateIntegration } from './repository.js';
import { IntegrationInput, IntegrationPatch, IntegrationView } from './schema.js';
import { configureImport, importSettings, importSettingsOf } from './import-settings.js';

const tags = ['integrations'];

/** Integrations with monitoring tools (docs/integrations.md). A secret goes in, never comes out. */
export function registerIntegrationRoutes(app: Api, { db, box, publicUrl }: { db: Kysely<Database>; box: SecretBox; publicUrl: string | undefined }): void {
  app.post('/integrations', {
    schema: {
      tags, ...access('admin'), summary: 'Connect a monitoring tool: its alerts go to the URL in the reply',
      body: IntegrationInput, response: { 201: IntegrationView, ...problems(400, 401, 409) },
    },
  }, async (request, reply) => {
    const row = await createIntegration(db, box, request.principal.tenantId, request.body);
    return reply.code(201).header('Location', `/api/v1/integrations/${row.id}`).send(presentIntegration(row, baseUrl(publicUrl, request)));
  });

  app.get('/integrations', {
    schema: {
      tags, ...access('viewer'), summary: 'List integrations (oldest first) with their last alert and last error',
      querystring: Type.Object({ ...PageQuery }, { additionalProperties: false }),
      response: { 200: pageOf(IntegrationView), ...problems(400, 401) },
    },
  }, async (request) => {
    const page = pageRequest(request.query);
    const rows = await listIntegrations(db, request.principal.tenantId, page);
    const imports = await importSettingsOf(db, rows.map((row) => row.id));
    return toPage(rows, page, (row) => presentIntegration(row, baseUrl(publicUrl, request), imports.get(row.id)));
  });

  app.get('/integrations/:id', {
    schema: { tags, ...access('viewer'), summary: 'Get an integration, with its last alert and error and the status of its import', params: IdParams, response: { 200: IntegrationView, ...problems(400, 401, 404) } },
  }, async (request) => {
    const row = await getIntegration(db, request.principal.tenantId, request.params.id);
    return presentIntegration(row, baseUrl(publicUrl, request), await importSettings(db, row.id));
  });

  app.get('/integrations/:id/alerts', {
    schema: {
      tags, ...access('viewer'), summary: 'The alerts the integration took, newest first, each with what it did (one event per rule it matched; none: no rule matched)',
      params: IdParams, querystring: Type.Object({ ...PageQuery }, { additionalProperties: false }),
      response: { 200: pageOf(AlertView), ...problems(400, 401, 404) },
    },
  }, async (request) => {
    const integration = await getIntegration(db, request.principal.tenantId, request.params.id);
    const page = pageRequest(request.query);
    return toPage(await listAlerts(db, integration.tenant_id, integration.id, page), page, presentAlert);
  });

  app.patch('/integrations/:id', {
    schema: {
      tags, ...access('admin'),
      summary: 'Change an integration: its name, its settings (replaced whole), its secret (null removes it), its import of the tool’s alarms (import: fields given replace stored ones)',
      params: IdParams, body: IntegrationPatch, response: { 200: IntegrationView, ...problems(400, 401, 404, 409) },
    },
  }, async (request) => {
    const current = await getIntegration(db, request.principal.tenantId, request.params.id);
    const { import: importPatch, ...patch } = request.body;
    const updated = Object.keys(patch).length > 0 ? await updateIntegration(db, box, current, patch) : current;
    const imports = importPatch ? await configureImport(db, box, updated, importPatch) : await importSettings(db, updated.id);
    return presentIntegration(updated, baseUrl(publicUrl, request), imports);
  });

  app.delete('/integrations/:id', {
    schema: {
      tags, ...access('admin'), summary: 'Delete an integration: its URL stops taking alerts and its rules stop firing; recorded events stay',
      params: IdParams, response: { 204: Type.Null(), ...problems(400, 401, 404) },
    },
  }, async (request, reply) => {
    await deleteIntegration(db, request.principal.tenantId, request.params.id);
    return reply.code(204).send(null);
  });
}
