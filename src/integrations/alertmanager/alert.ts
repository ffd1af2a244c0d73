import type { FieldError } from '../../errors/catalogue.js';
import { toolTime, type ToolAlert, type ToolNotification } from '../notification.js';
import { isRecord } from '../values.js';

/**
 * One alert of an Alertmanager-shaped group, as both Alertmanager (template.Alert) and Grafana
 * (templates.ExtendedAlert, a superset) send it: status, labels, annotations, startsAt, endsAt,
 * generatorURL, fingerprint. Grafana's parser reuses this; see docs/integrations/alertmanager.md.
 */
export interface GroupAlertOptions {
  /** JSON pointer of the alert in the body, for error paths (e.g. /body/alerts/0). */
  at: string;
  /** The label naming the host (config.hostLabel); `instance` when unset. */
  hostLabel: string;
  /** Fields of the group kept beside the alert in `raw` (receiver, groupKey, externalURL...); the alert's own win. */
  group: Record<string, unknown>;
}

/** Every alert of a group (Alertmanager's or Grafana's), or every field error of any of them. */
export function readGroupAlerts(values: unknown[], hostLabel: string, group: Record<string, unknown>): ToolNotification {
  const alerts: ToolAlert[] = [];
  const errors: FieldError[] = [];
  values.forEach((value, i) => {
    const read = readGroupAlert(value, { at: `/body/alerts/${i}`, hostLabel, group });
    if (Array.isArray(read)) errors.push(...read);
    else alerts.push(read);
  });
  return errors.length > 0 ? { kind: 'invalid', errors } : { kind: 'alerts', alerts };
}

export function readGroupAlert(value: unknown, options: GroupAlertOptions): ToolAlert | FieldError[] {
  const { at } = options;
  if (!isRecord(value)) return [{ path: at, message: `${describe(at)}: expected an alert object, got ${kindOf(value)}` }];
  const errors: FieldError[] = [];

  const status = value.status;
  if (status !== 'firing' && status !== 'resolved') {
    errors.push({ path: `${at}/status`, message: `${describe(at)}.status: expected "firing" or "resolved", got ${shown(status)}` });
  }
  const fingerprint = value.fingerprint;
  if (typeof fingerprint !== 'string' || fingerprint === '') {
    errors.push({ path: `${at}/fingerprint`, message: `${describe(at)}.fingerprint: expected the alert's fingerprint (a non-empty string), got ${shown(fingerprint)}` });
  }
  const startsAt = typeof value.startsAt === 'string' ? Date.parse(value.startsAt) : Number.NaN;
  if (Number.isNaN(startsAt)) {
    errors.push({ path: `${at}/startsAt`, message: `${describe(at)}.startsAt: expected an RFC 3339 time such as "2024-05-01T10:00:00Z", got ${shown(value.startsAt)}` });
  }
  const labels = readTextMap(value.labels, `${at}/labels`, errors, true);
  const annotations = readTextMap(value.annotations, `${at}/annotations`, errors, false);
  if (errors.length > 0) return errors;

  const state = status as 'firing' | 'resolved';
  const hostValue = labels[options.hostLabel];
  return {
    alarmName: nonEmpty(labels.alertname),
    hostName: hostValue === undefined ? undefined : nonEmpty(hostFromAddress(hostValue)),
    hostLabel: options.hostLabel,
    severity: nonEmpty(labels.severity),
    state,
    // The tool's fingerprint identifies the label set; startsAt identifies this firing of it
    // (a repeat notification keeps it, a new firing after a resolve gets a new one); the status
    // tells the firing from its resolve. startsAt is normalised to UTC milliseconds so that two
    // Alertmanager replicas writing the same instant with different offsets agree.
    fingerprint: `${fingerprint as string}@${new Date(startsAt).toISOString()}:${state}`,
    // The label set's fingerprint is the alarm on its host (observation.ts); its firing began at
    // startsAt and ended at endsAt (a firing alert's endsAt is only when it would time out).
    incidentKey: fingerprint as string,
    at: state === 'firing' ? startsAt : toolTime(value.endsAt),
    labels,
    annotations,
    raw: withGroup(options.group, value),
  };
}

/**
 * The alert's fields beside the group's, the alert's own winning over the group's of the same name
 * (Grafana's alerts carry orgId too): `{ ...group, ...alert }` written as a loop. On Node 20 (V8
 * 11.3) that spread of two objects costs ~3.9 µs an alert, the loop ~0.3 µs (bench/README.md,
 * session 39). A `__proto__` key is defined, as the spread would, never given to the setter.
 */
function withGroup(group: Record<string, unknown>, alert: Record<string, unknown>): Record<string, unknown> {
  const raw: Record<string, unknown> = {};
  for (const source of [group, alert]) {
    for (const key of Object.keys(source)) {
      if (key === '__proto__') Object.defineProperty(raw, key, { value: source[key], enumerable: true, writable: true, configurable: true });
      else raw[key] = source[key];
    }
  }
  return raw;
}

/**
 * The host part of an address as exporters put it in `instance`: `web-1:9100` → `web-1`,
 * `[::1]:9100` → `::1`, `http://web-1:8080/health` → `web-1` (blackbox targets); a bare IPv6
 * address (`fe80::1`) or a plain name is returned as it is.
 */
export function hostFromAddress(value: string): string {
  const text = value.trim();
  if (text.includes('://')) {
    try {
      const host = new URL(text).hostname;
      if (host !== '') return host.replace(/^\[(.*)\]$/, '$1');
    } catch {
      // not a URL after all: read it as host:port below
    }
  }
  const bracketed = /^\[([^\]]+)\](?::\d+)?$/.exec(text);
  if (bracketed) return bracketed[1] as string;
  const hostPort = /^([^:]+):\d+$/.exec(text);
  if (hostPort) return hostPort[1] as string;
  return text;
}

/** Labels and annotations as text: strings as they are, other scalars as JSON text, nested values JSON-encoded. */
function readTextMap(value: unknown, at: string, errors: FieldError[], required: boolean): Record<string, string> {
  if (value === undefined && !required) return {};
  if (!isRecord(value)) {
    errors.push({ path: at, message: `${describe(at)}: expected an object of names to strings, got ${kindOf(value)}` });
    return {};
  }
  const out: Record<string, string> = {};
  for (const [name, v] of Object.entries(value)) {
    if (v === null || v === undefined) continue;
    const text = typeof v === 'string' ? v : safeJson(v);
    if (text === undefined) errors.push({ path: `${at}/${name}`, message: `${describe(at)}.${name}: expected a string, got a value nested too deep to read` });
    else out[name] = text;
  }
  return out;
}


export function kindOf(value: unknown): string {
  if (value === undefined) return 'nothing';
  if (value === null) return 'null';
  if (Array.isArray(value)) return 'an array';
  return typeof value === 'object' ? 'an object' : `${typeof value} ${shown(value)}`;
}

/** A value for a message: short, quoted when a string. */
export function shown(value: unknown): string {
  if (value === undefined) return 'nothing';
  const text = safeJson(value) ?? 'a value nested too deep to show';
  return text.length > 60 ? `${text.slice(0, 57)}...` : text;
}

/** `/body/alerts/0` → `alerts[0]`, so messages name the field the way a person reads the body. */
export function describe(pointer: string): string {
  return pointer
    .replace(/^\/body\/?/, '')
    .split('/')
    .filter((part) => part !== '')
    .map((part, i) => (/^\d+$/.test(part) ? `[${part}]` : i === 0 ? part : `.${part}`))
    .join('') || 'body';
}

/** JSON text, or undefined when the value cannot be written (nested deeper than the stack allows). */
function safeJson(value: unknown): string | undefined {
  try {
    return JSON.stringify(value) ?? String(value);
  } catch {
    return undefined;
  }
}

function nonEmpty(value: string | undefined): string | undefined {
  return value === undefined || value === '' ? undefined : value;
}

/**
 * `config.hostLabel`: the label naming the host, `instance` when unset. A label name as
 * Prometheus allows it ([a-zA-Z_][a-zA-Z0-9_]*). `at` is where the config sits in the request
 * checked: `/body/config` when an integration is created, `/config` when a notification is read.
 */
export function readHostLabel(config: Record<string, unknown>, at: string): string | FieldError[] {
  const value = config.hostLabel;
  if (value === undefined || value === null) return 'instance';
  if (typeof value !== 'string' || !/^[a-zA-Z_][a-zA-Z0-9_]*$/.test(value)) {
    return [{ path: `${at}/hostLabel`, message: `hostLabel: expected a label name such as "instance" or "hostname" (letters, digits and _), got ${shown(value)}` }];
  }
  return value;
}
