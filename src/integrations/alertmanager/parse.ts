import type { FieldError } from '../../errors/catalogue.js';
import type { ToolNotification, ToolRequest } from '../notification.js';
import { kindOf, readGroupAlerts, readHostLabel, shown } from './alert.js';
import { checkImportConfig } from './import.js';
import { isRecord } from '../values.js';
import { invalid } from '../values.js';

/**
 * Prometheus Alertmanager's webhook body, version 4 (notify/webhook/webhook.go `Message`:
 * template.Data plus version, groupKey, truncatedAlerts). Every alert of the group becomes its own
 * ToolAlert with its own status: a group whose status is "firing" may carry resolved alerts.
 * What is read and kept: docs/integrations/alertmanager.md. Pure: no I/O, no signature
 * (Alertmanager does not sign; the API key in the URL authenticates).
 */
export function parseAlertmanager(request: ToolRequest): ToolNotification {
  const hostLabel = readHostLabel(request.config, '/config');
  if (Array.isArray(hostLabel)) return { kind: 'invalid', errors: hostLabel };

  const body = request.body;
  if (!isRecord(body)) {
    return invalid('/body', `body: expected the JSON object Alertmanager's webhook_config sends (with "version": "4" and "alerts"), got ${kindOf(body)}`);
  }
  if (body.version !== '4') {
    const message = body.version === undefined
      ? 'version: missing; Alertmanager\'s webhook_config sends "version": "4". A custom `payload` in the webhook_config replaces that body: remove it for this receiver'
      : `version: this integration reads Alertmanager webhook version "4", the body says version ${shown(body.version)}; point this receiver at a matching integration type or upgrade Alertmanager`;
    return invalid('/body/version', message);
  }
  if (!Array.isArray(body.alerts)) return invalid('/body/alerts', `alerts: expected the array of the group's alerts, got ${kindOf(body.alerts)}`);

  // Kept beside each alert in `raw`, so a stored event still says which receiver and group it came from.
  const group: Record<string, unknown> = {};
  for (const name of ['receiver', 'groupKey', 'externalURL'] as const) {
    if (typeof body[name] === 'string') group[name] = body[name];
  }

  return readGroupAlerts(body.alerts, hostLabel, group);
}

/** Field errors of an alertmanager integration's config, for the API when it is created or changed. */
export function checkAlertmanagerConfig(config: Record<string, unknown>, at = '/body/config'): FieldError[] {
  const hostLabel = readHostLabel(config, at);
  return [...(Array.isArray(hostLabel) ? hostLabel : []), ...checkImportConfig(config, at)];
}

