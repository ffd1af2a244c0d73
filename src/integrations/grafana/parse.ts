import type { FieldError } from '../../errors/catalogue.js';
import type { ToolNotification, ToolRequest } from '../notification.js';
import { kindOf, readGroupAlerts, readHostLabel, shown } from '../alertmanager/alert.js';
import { isRecord } from '../values.js';
import { readHeaderNames, verifyGrafanaSignature } from './signature.js';
import { invalid } from '../values.js';

/**
 * Grafana unified alerting's webhook contact point body, version "1" (grafana/alerting
 * receivers/webhook/v1/webhook.go `webhookMessage`: templates.ExtendedData plus version, groupKey,
 * truncatedAlerts, orgId, title, state, message). Its alerts are Alertmanager's with Grafana's
 * extras (silenceURL, dashboardURL, panelURL, values, valueString...), read the same way as
 * Alertmanager's (alertmanager/alert.ts). When the integration has a secret, the HMAC signature
 * is checked first (signature.ts). Pure: no I/O. Details: docs/integrations/grafana.md.
 */
export function parseGrafana(request: ToolRequest): ToolNotification {
  const hostLabel = readHostLabel(request.config, '/config');
  if (Array.isArray(hostLabel)) return { kind: 'invalid', errors: hostLabel };
  const signatureErrors = verifyGrafanaSignature(request);
  if (signatureErrors.length > 0) return { kind: 'invalid', errors: signatureErrors };

  const body = request.body;
  if (!isRecord(body)) {
    return invalid('/body', `body: expected the JSON object Grafana's webhook contact point sends (with "version": "1" and "alerts"), got ${kindOf(body)}`);
  }
  if (body.version !== '1') {
    let message: string;
    if (body.version === undefined) {
      message = 'version: missing; Grafana\'s webhook contact point sends "version": "1". A custom payload template in the contact point replaces that body: remove it for this contact point';
    } else if (body.version === '4') {
      message = 'version: "4" is the body of Prometheus Alertmanager\'s webhook, not Grafana\'s; create an integration of type alertmanager for it';
    } else {
      message = `version: this integration reads Grafana webhook version "1", the body says version ${shown(body.version)}`;
    }
    return invalid('/body/version', message);
  }
  if (!Array.isArray(body.alerts)) return invalid('/body/alerts', `alerts: expected the array of the group's alerts, got ${kindOf(body.alerts)}`);

  // Kept beside each alert in `raw`: which contact point, group and organisation it came from.
  const group: Record<string, unknown> = {};
  for (const name of ['receiver', 'groupKey', 'externalURL', 'orgId'] as const) {
    if (typeof body[name] === 'string' || typeof body[name] === 'number') group[name] = body[name];
  }

  return readGroupAlerts(body.alerts, hostLabel, group);
}

/** Field errors of a grafana integration's config (hostLabel, signatureHeader, timestampHeader), for the API. */
export function checkGrafanaConfig(config: Record<string, unknown>, at = '/body/config'): FieldError[] {
  const hostLabel = readHostLabel(config, at);
  const headers = readHeaderNames(config, at);
  return [...(Array.isArray(hostLabel) ? hostLabel : []), ...(Array.isArray(headers) ? headers : [])];
}

