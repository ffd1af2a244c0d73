import type { Kysely } from 'kysely';
import { Type } from 'typebox';
import { IdParams, PageQuery, pageOf, problems } from '../http/schemas.js';
import { access } from '../identity/access.js';
import type { Api } from '../http/types.js';
import type { SecretBox } from '../identity/secret-box.js';
import { pageRequest, toPage } from '../store/pagination.js';
import type { CredentialRow, Database } from '../store/schema.js';
import { PitcrewError } from '../errors/catalogue.js';
import { createCredential, deleteCredential, getCredential, listCredentials, openCredential, recordTest, updateCredential } from './repository.js';
import { CredentialInput, CredentialPatch, CredentialTestView, CredentialView, type Probe, type Provider } from './schema.js';

const tags = ['credentials'];

/** A tenant's cloud credentials (docs/credentials.md): a secret goes in, never comes out. */
export function registerCredentialRoutes(app: Api, { db, box, probe }: { db: Kysely<Database>; box: SecretBox; probe: Probe }): void {
  app.post('/credentials', {
    schema: {
      tags, ...access('admin'), summary: "Store a cloud credential (AWS keys, an Azure service principal, a GCP service account key, an OpenStack application credential), sealed; the secret is never returned",
      body: CredentialInput, response: { 201: CredentialView, ...problems(400, 401, 409) },
    },
  }, async (request, reply) => {
    const row = await createCredential(db, box, request.principal.tenantId, request.body);
    return reply.code(201).header('Location', `/api/v1/credentials/${row.id}`).send(presentCredential(row));
  });

  app.get('/credentials', {
    schema: {
      tags, ...access('viewer'), summary: 'List credentials (oldest first): provider, what identifies each, its last test',
      querystring: Type.Object({ ...PageQuery }, { additionalProperties: false }), response: { 200: pageOf(CredentialView), ...problems(400, 401) },
    },
  }, async (request) => {
    const page = pageRequest(request.query);
    return toPage(await listCredentials(db, request.principal.tenantId, page), page, presentCredential);
  });

  app.get('/credentials/:id', {
    schema: { tags, ...access('viewer'), summary: 'Get a credential (never its secret)', params: IdParams, response: { 200: CredentialView, ...problems(400, 401, 404) } },
  }, async (request) => presentCredential(await getCredential(db, request.principal.tenantId, request.params.id)));

  app.patch('/credentials/:id', {
    schema: {
      tags, ...access('admin'), summary: "Rename a credential, or replace its secret whole (a rotated key); its provider stays",
      params: IdParams, body: CredentialPatch, response: { 200: CredentialView, ...problems(400, 401, 404, 409) },
    },
  }, async (request) => {
    const current = await getCredential(db, request.principal.tenantId, request.params.id);
    return presentCredential(await updateCredential(db, box, current, request.body));
  });

  app.delete('/credentials/:id', {
    schema: {
      tags, ...access('admin'), summary: 'Delete a credential (refused while a rule uses it); its sealed secret is gone',
      params: IdParams, response: { 204: Type.Null(), ...problems(400, 401, 404, 409) },
    },
  }, async (request, reply) => {
    await deleteCredential(db, request.principal.tenantId, request.params.id);
    return reply.code(204).send(null);
  });

  app.post('/credentials/:id/test', {
    schema: {
      tags, ...access('operator'),
      summary: "Test a credential with one harmless read at the provider (AWS: ec2:DescribeRegions); 502 with the provider's answer when it refuses",
      params: IdParams, response: { 200: CredentialTestView, ...problems(400, 401, 404, 502, 503) },
    },
  }, async (request) => {
    const row = await getCredential(db, request.principal.tenantId, request.params.id);
    const started = performance.now();
    try {
      const result = await probe(row.provider as Provider, openCredential(box, row));
      await recordTest(db, row.id, { ok: true, message: result.message });
      return { ok: true as const, ...result, durationMs: Math.round(performance.now() - started) };
    } catch (error) {
      if (error instanceof PitcrewError) await recordTest(db, row.id, { ok: false, message: error.message });
      throw error;
    }
  });
}

export function presentCredential(row: CredentialRow): CredentialView {
  const iso = (ms: number) => new Date(ms).toISOString();
  return {
    id: row.id,
    name: row.name,
    provider: row.provider as Provider,
    summary: JSON.parse(row.summary) as Record<string, string>,
    lastTest: row.last_test_at === null ? null : { at: iso(row.last_test_at), ok: row.last_test_ok === 1, message: row.last_test_message ?? '' },
    createdAt: iso(row.created_at),
    updatedAt: iso(row.updated_at),
  };
}
