import type { IntegrationRow } from '../store/schema.js';
import { integrationPath, type IntegrationType, type IntegrationView } from './schema.js';

const API_KEY_PLACEHOLDER = '<api_key>';

export function presentIntegration(row: IntegrationRow, baseUrl: string): IntegrationView {
  const iso = (ms: number | null) => (ms === null ? null : new Date(ms).toISOString());
  return {
    id: row.id,
    name: row.name,
    type: row.type as IntegrationType,
    url: baseUrl + integrationPath(row.type, API_KEY_PLACEHOLDER, row.id),
    config: JSON.parse(row.config) as Record<string, unknown>,
    hasSecret: row.secret !== null,
    status: { lastAlertAt: iso(row.last_alert_at), lastError: row.last_error, lastErrorAt: iso(row.last_error_at) },
    createdAt: new Date(row.created_at).toISOString(),
    updatedAt: new Date(row.updated_at).toISOString(),
  };
}
