import type { Kysely } from 'kysely';
import { Type } from 'typebox';
import { PitcrewError } from '../errors/catalogue.js';
import { IdParams, PageQuery, pageOf, problems } from '../http/schemas.js';
import type { Api } from '../http/types.js';
import { access } from '../identity/access.js';
import { audited } from '../identity/audit/naming.js';
import { importNeeds } from '../integrations/import-needs.js';
import { importSettings } from '../integrations/import-settings.js';
import { getIntegration } from '../integrations/repository.js';
import type { IntegrationType } from '../integrations/schema.js';
import { pageRequest, toPage } from '../store/pagination.js';
import type { Database } from '../store/schema.js';
import { presentImport } from './presenter.js';
import { listImports } from './repository.js';
import { ImportQueued, ImportView } from './schema.js';

const tags = ['integrations'];

/** Imports of a tool's alarms on demand, and their history (docs/incidents-import.md); the settings are PATCH /integrations/{id} {import}. */
export function registerImportRoutes(app: Api, { db, request }: { db: Kysely<Database>; request: (integration: { id: string; tenant_id: string }) => Promise<{ id: string; created: boolean }> }): void {
  app.post('/integrations/:id/import', {
    schema: {
      tags, ...access('operator'), ...audited('integration.import'),
      summary: 'Import the tool’s alarms now, from where the last import stopped (its first: the look-back); 202 with the import’s id, or the one already queued or running',
      params: IdParams, response: { 202: ImportQueued, ...problems(400, 401, 404) },
    },
  }, async (req, reply) => {
    const integration = await getIntegration(db, req.principal.tenantId, req.params.id);
    const settings = await importSettings(db, integration.id);
    const needs = importNeeds(integration.type as IntegrationType);
    if (!needs || !settings) {
      throw new PitcrewError('PITCREW_ERR_VALIDATION', `integration ${integration.id} has no import set up: PATCH /api/v1/integrations/${integration.id} {"import": {"enabled": …}} first (docs/incidents-import.md)`);
    }
    const errors = needs.settingsErrors({
      config: JSON.parse(integration.config) as Record<string, unknown>, hasSecret: settings.secret !== null,
      credentialProvider: settings.credential_id === null ? undefined : 'stored', integrationHasSecret: integration.secret !== null,
    });
    if (errors.length > 0) throw new PitcrewError('PITCREW_ERR_VALIDATION', `the import cannot run yet: ${errors[0]!.message}`, { fieldErrors: errors });
    const queued = await request(integration);
    return reply.code(202).send({ importId: queued.id, created: queued.created });
  });

  app.get('/integrations/:id/imports', {
    schema: {
      tags, ...access('viewer'), summary: 'The integration’s imports, newest first: state, when, what each applied, why one failed',
      params: IdParams, querystring: Type.Object({ ...PageQuery }, { additionalProperties: false }),
      response: { 200: pageOf(ImportView), ...problems(400, 401, 404) },
    },
  }, async (req) => {
    const integration = await getIntegration(db, req.principal.tenantId, req.params.id);
    const page = pageRequest(req.query);
    return toPage(await listImports(db, integration.id, page), page, presentImport);
  });
}
