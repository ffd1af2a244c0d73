import { curlPost } from '../http/curl.js';
import type { IntegrationImportRow, IntegrationRow } from '../store/schema.js';
import { importNeeds } from './import-needs.js';
import { presentImportSettings } from './import-settings.js';
import { sampleDelivery, SAMPLE_HOST } from './samples.js';
import { integrationPath, type IntegrationType, type IntegrationView } from './schema.js';

const API_KEY_PLACEHOLDER = '<api_key>';

/** `imports`: the integration's import settings and status, when it has been set up to import. */
export function presentIntegration(row: IntegrationRow, baseUrl: string, imports?: IntegrationImportRow): IntegrationView {
  const iso = (ms: number | null) => (ms === null ? null : new Date(ms).toISOString());
  const config = JSON.parse(row.config) as Record<string, unknown>;
  const type = row.type as IntegrationType;
  const hasSecret = row.secret !== null;
  return {
    id: row.id,
    name: row.name,
    type,
    url: baseUrl + integrationPath(row.type, API_KEY_PLACEHOLDER, row.id),
    ...commands(row.id, type, config, hasSecret, baseUrl),
    config,
    hasSecret,
    hasGraphSecret: row.graph_secret !== null,
    status: { lastAlertAt: iso(row.last_alert_at), lastError: row.last_error, lastErrorAt: iso(row.last_error_at) },
    import: presentImportSettings(imports),
    importNeeds: needsOf(type),
    createdAt: new Date(row.created_at).toISOString(),
    updatedAt: new Date(row.updated_at).toISOString(),
  };
}

/**
 * Ready to paste, as a webhook rule's curl: the tool's own body for one alert about web-1 posted to
 * the integration's URL (the API key from the shell: it is stored hashed), when someone other than
 * the tool can make one; and a test alert through the management API, a dry run.
 */
function commands(id: string, type: IntegrationType, config: Record<string, unknown>, hasSecret: boolean, baseUrl: string): Pick<IntegrationView, 'curl' | 'testCurl'> {
  const sample = sampleDelivery(type, config, hasSecret);
  const testCurl = curlPost(`${baseUrl}/api/v1/integrations/${id}/test`, { hostName: SAMPLE_HOST }, { Authorization: 'Bearer ${PITCREW_TOKEN}' });
  if (!sample) return { testCurl };
  return { curl: curlPost(baseUrl + integrationPath(type, '${PITCREW_API_KEY}', id), sample.body, sample.headers), testCurl };
}

/** What an import of the tool needs, as the UI shows it; null for a tool without an import. */
function needsOf(type: IntegrationType): IntegrationView['importNeeds'] {
  const needs = importNeeds(type);
  return needs ? { tool: needs.tool, secret: needs.secretShape, credentialProviders: [...needs.credentialProviders] } : null;
}
