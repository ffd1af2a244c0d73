import type { FieldError } from '../errors/catalogue.js';
import type { SecretBox } from '../identity/secret-box.js';
import type { IntegrationRow } from '../store/schema.js';
import { isRecord } from './values.js';
import type { IntegrationType } from './schema.js';

/*
 * The integration's graph secret (docs/graph-snapshots.md): what its graphs are read with when the
 * import's credential does not serve. Grafana has no import, so its service account token lives
 * here; Prometheus may sit behind a proxy asking for another login than Alertmanager's. Write-only,
 * sealed for `<id>:graph`, so no other sealed value opens in its place.
 */

export function graphSecretOwner(integrationId: string): string {
  return `${integrationId}:graph`;
}

export function sealGraphSecret(box: SecretBox, integrationId: string, secret: unknown): string {
  return box.seal(JSON.stringify(secret), graphSecretOwner(integrationId));
}

/** The graph secret, opened; undefined when none is set. */
export function openGraphSecret(box: SecretBox, row: Pick<IntegrationRow, 'id' | 'graph_secret'>): unknown {
  return row.graph_secret === null ? undefined : JSON.parse(box.open(row.graph_secret, graphSecretOwner(row.id))) as unknown;
}

/** Field errors of a graph secret as given: the shape the tool's graph source reads. */
export function graphSecretErrors(type: IntegrationType, secret: unknown, at: string): FieldError[] {
  switch (type) {
    case 'grafana':
      return typeof secret === 'string' && secret.trim() !== '' ? [] : [{ path: at, message: 'a Grafana graph secret is a service account token (glsa_…, a string; the Viewer role is enough)' }];
    case 'alertmanager':
      if (typeof secret === 'string' && secret.trim() !== '') return [];
      if (isRecord(secret) && typeof secret.username === 'string' && typeof secret.password === 'string' && Object.keys(secret).length === 2) return [];
      return [{ path: at, message: 'a Prometheus graph secret is a bearer token (a string) or {username, password} for basic authentication at a proxy in front of it' }];
    default:
      return [{ path: at, message: `${type} graphs are read with the import's credential (docs/graph-snapshots.md): a graph secret is for grafana (its service account token) and alertmanager (Prometheus's bearer token or login)` }];
  }
}
