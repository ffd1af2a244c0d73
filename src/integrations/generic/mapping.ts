import type { FieldError } from '../../errors/catalogue.js';
import { parsePath, type PathSegment } from './path.js';

/**
 * A generic integration's `config.mapping`: where, in the tool's JSON, each field of an alert is.
 * `alerts` (optional) points at an array whose every element is one alert; the other paths are
 * then relative to the element. Every path is optional; see docs/integrations/generic.md.
 */
export interface GenericMapping {
  alerts: PathSegment[] | undefined;
  name: PathSegment[] | undefined;
  host: PathSegment[] | undefined;
  severity: PathSegment[] | undefined;
  state: PathSegment[] | undefined;
  fingerprint: PathSegment[] | undefined;
  /** Lower-cased words that mean firing and resolved when found at `state`. */
  stateValues: { firing: string[]; resolved: string[] };
}

/**
 * Words monitoring tools use for the two states (Alertmanager/Grafana firing/resolved, Monasca
 * ALARM/OK, Zabbix PROBLEM/RESOLVED, Nagios CRITICAL/WARNING/OK, PagerDuty triggered/resolved,
 * Opsgenie open/closed). Compared without case. A list in mapping.stateValues replaces its default.
 */
export const DEFAULT_STATE_VALUES = {
  firing: ['firing', 'alarm', 'alert', 'alerting', 'problem', 'triggered', 'open', 'active', 'critical', 'warning', 'down'],
  resolved: ['resolved', 'ok', 'recovery', 'recovered', 'closed', 'inactive', 'normal', 'up'],
} as const;

const PATH_FIELDS = ['alerts', 'name', 'host', 'severity', 'state', 'fingerprint'] as const;
const KNOWN = new Set<string>([...PATH_FIELDS, 'stateValues']);

/**
 * The field errors of a generic integration's config, none when its mapping can be used: for the
 * API to answer 400 when the integration is created or changed. `at` is where the config sits
 * in the request checked (`/body/config` for POST /api/v1/integrations).
 */
export function checkGenericMapping(config: Record<string, unknown>, at = '/body/config'): FieldError[] {
  const read = readGenericMapping(config, at);
  return Array.isArray(read) ? read : [];
}

export function readGenericMapping(config: Record<string, unknown>, at: string): GenericMapping | FieldError[] {
  const mapping = config.mapping;
  const here = `${at}/mapping`;
  if (typeof mapping !== 'object' || mapping === null || Array.isArray(mapping)) {
    return [{ path: here, message: 'mapping: expected an object of JSON paths, such as {"name": "alert.name", "host": "alert.host", "state": "status"}' }];
  }
  const fields = mapping as Record<string, unknown>;
  const errors: FieldError[] = [];
  for (const key of Object.keys(fields)) {
    if (!KNOWN.has(key)) {
      errors.push({ path: `${here}/${key}`, message: `mapping.${key}: not a mapping field; the fields are ${[...KNOWN].join(', ')}` });
    }
  }

  const paths: Partial<Record<(typeof PATH_FIELDS)[number], PathSegment[]>> = {};
  for (const field of PATH_FIELDS) {
    const value = fields[field];
    if (value === undefined || value === null) continue;
    if (typeof value !== 'string') {
      errors.push({ path: `${here}/${field}`, message: `mapping.${field}: expected a JSON path as a string, such as "alerts[0].host", got ${typeof value}` });
      continue;
    }
    const parsed = parsePath(value);
    if (typeof parsed === 'string') errors.push({ path: `${here}/${field}`, message: `mapping.${field}: ${parsed}` });
    else if (parsed.length === 0 && field !== 'alerts') errors.push({ path: `${here}/${field}`, message: `mapping.${field}: "$" is the whole alert; point at one of its fields` });
    else paths[field] = parsed;
  }
  if (!PATH_FIELDS.some((f) => f !== 'alerts' && fields[f] !== undefined && fields[f] !== null)) {
    errors.push({ path: here, message: 'mapping: give at least one of name, host, severity, state or fingerprint, so pitcrew knows what the alert is' });
  }

  const stateValues = readStateValues(fields.stateValues, `${here}/stateValues`, errors);
  if (errors.length > 0) return errors;
  return {
    alerts: paths.alerts,
    name: paths.name,
    host: paths.host,
    severity: paths.severity,
    state: paths.state,
    fingerprint: paths.fingerprint,
    stateValues,
  };
}

function readStateValues(value: unknown, at: string, errors: FieldError[]): GenericMapping['stateValues'] {
  const result = { firing: [...DEFAULT_STATE_VALUES.firing] as string[], resolved: [...DEFAULT_STATE_VALUES.resolved] as string[] };
  if (value === undefined || value === null) return result;
  if (typeof value !== 'object' || Array.isArray(value)) {
    errors.push({ path: at, message: 'mapping.stateValues: expected {"firing": ["PROBLEM"], "resolved": ["OK"]} (either list may be left out)' });
    return result;
  }
  const lists = value as Record<string, unknown>;
  for (const key of Object.keys(lists)) {
    if (key !== 'firing' && key !== 'resolved') {
      errors.push({ path: `${at}/${key}`, message: `mapping.stateValues.${key}: only "firing" and "resolved" are states` });
    }
  }
  for (const state of ['firing', 'resolved'] as const) {
    const list = lists[state];
    if (list === undefined) continue;
    const words = Array.isArray(list) ? list.filter((w): w is string | number | boolean => ['string', 'number', 'boolean'].includes(typeof w)) : [];
    if (!Array.isArray(list) || words.length !== list.length || words.length === 0 || words.some((w) => String(w).trim() === '')) {
      errors.push({ path: `${at}/${state}`, message: `mapping.stateValues.${state}: expected a non-empty list of words (or numbers) that mean ${state}, such as ["PROBLEM", "1"]` });
      continue;
    }
    result[state] = words.map((w) => String(w).trim().toLowerCase());
  }
  const both = result.firing.filter((w) => result.resolved.includes(w));
  if (both.length > 0) {
    errors.push({ path: at, message: `mapping.stateValues: ${both.map((w) => `"${w}"`).join(', ')} cannot mean both firing and resolved; list it in only one (a list you give replaces that state's defaults)` });
  }
  return result;
}
