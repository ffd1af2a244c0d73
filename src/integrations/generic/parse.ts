import { createHash } from 'node:crypto';
import type { FieldError } from '../../errors/catalogue.js';
import type { ToolAlert, ToolNotification, ToolRequest } from '../notification.js';
import { readGenericMapping, type GenericMapping } from './mapping.js';
import { pointerOf, valueAt, type PathSegment } from './path.js';

/** As the webhook trigger (docs/webhook.md): monitoring tools nest four or five levels. */
const MAX_DEPTH = 64;

/**
 * Any other tool's JSON, read through the integration's `config.mapping` (mapping.ts). Each
 * element of `mapping.alerts` (or the body itself) is one alert. Pure: no I/O, no signature.
 * The rules for name, host, state, fingerprint and labels: docs/integrations/generic.md.
 */
export function parseGeneric(request: ToolRequest): ToolNotification {
  const mapping = readGenericMapping(request.config, '/config');
  if (Array.isArray(mapping)) return { kind: 'invalid', errors: mapping };

  const body = request.body;
  if (body === undefined) {
    return { kind: 'invalid', errors: [{ path: '/body', message: 'body: expected JSON (send Content-Type: application/json)' }] };
  }
  if (depthOver(body, MAX_DEPTH)) {
    return { kind: 'invalid', errors: [{ path: '/body', message: `body: objects and arrays nest more than ${MAX_DEPTH} levels; monitoring tools send a few` }] };
  }

  let elements: { value: unknown; at: string }[] = [{ value: body, at: '/body' }];
  if (mapping.alerts !== undefined) {
    const list = valueAt(body, mapping.alerts);
    const at = pointerOf('/body', mapping.alerts);
    if (!Array.isArray(list)) {
      return { kind: 'invalid', errors: [{ path: at, message: `${where(at)}: mapping.alerts points here, expected an array of alerts, got ${kindOf(list)}` }] };
    }
    elements = list.map((value, i) => ({ value, at: `${at}/${i}` }));
  }

  const alerts: ToolAlert[] = [];
  const errors: FieldError[] = [];
  for (const element of elements) {
    const read = readElement(element.value, element.at, mapping);
    if (Array.isArray(read)) errors.push(...read);
    else alerts.push(read);
  }
  return errors.length > 0 ? { kind: 'invalid', errors } : { kind: 'alerts', alerts };
}

function readElement(element: unknown, at: string, mapping: GenericMapping): ToolAlert | FieldError[] {
  const errors: FieldError[] = [];
  const scalar = (field: 'name' | 'host' | 'severity' | 'state' | 'fingerprint'): string | undefined => {
    const path = mapping[field];
    if (path === undefined) return undefined;
    const value = valueAt(element, path);
    if (value === undefined || value === null) return undefined;
    if (typeof value === 'object') {
      const pointer = pointerOf(at, path);
      errors.push({ path: pointer, message: `${where(pointer)}: mapping.${field} points here, expected text or a number, got ${kindOf(value)}` });
      return undefined;
    }
    const text = String(value).trim();
    return text === '' ? undefined : text;
  };

  const name = scalar('name');
  const host = scalar('host');
  const severity = scalar('severity');
  const stateWord = scalar('state');
  const id = scalar('fingerprint');

  let state: 'firing' | 'resolved' = 'firing';
  if (mapping.state !== undefined) {
    const pointer = pointerOf(at, mapping.state);
    const word = stateWord?.toLowerCase();
    if (word !== undefined && mapping.stateValues.firing.includes(word)) state = 'firing';
    else if (word !== undefined && mapping.stateValues.resolved.includes(word)) state = 'resolved';
    else if (!errors.some((e) => e.path === pointer)) {
      errors.push({
        path: pointer,
        message: `${where(pointer)}: mapping.state points here, expected one of ${[...mapping.stateValues.firing, ...mapping.stateValues.resolved].map((w) => `"${w}"`).join(', ')}, got ${stateWord === undefined ? 'nothing' : JSON.stringify(stateWord)}; add the word to mapping.stateValues`,
      });
    }
  }
  if (mapping.fingerprint !== undefined && id === undefined && !errors.some((e) => e.path === pointerOf(at, mapping.fingerprint as PathSegment[]))) {
    const pointer = pointerOf(at, mapping.fingerprint);
    errors.push({ path: pointer, message: `${where(pointer)}: mapping.fingerprint points here, expected the alert's id, got nothing; fix the path or leave it out to fingerprint the whole alert` });
  }
  if (errors.length > 0) return errors;

  return {
    alarmName: name,
    hostName: host,
    severity,
    state,
    // The tool's id when the mapping names one, else the alert's whole content: a re-sent alert is
    // the same JSON. The state is part of it so that a resolve is not a duplicate of its firing.
    fingerprint: `${id ?? `sha256:${createHash('sha256').update(canonicalJson(element)).digest('hex')}`}:${state}`,
    // The tool's id when the mapping names one (the same for the firing and its resolution), else the alarm on its host.
    incidentKey: id ?? `sha256:${createHash('sha256').update(canonicalJson([name ?? '', host ?? ''])).digest('hex')}`,
    at: null,
    labels: flattenScalars(element),
    annotations: {},
    raw: typeof element === 'object' && element !== null && !Array.isArray(element) ? (element as Record<string, unknown>) : { value: element },
  };
}

/**
 * Every scalar leaf of the alert, named by its path with `_` between the steps (`host`,
 * `tags_0`, `meta_region`); numbers and booleans as their JSON text; nulls left out. When two
 * paths make one name (`a_b` and `a.b`), the first in the body wins. A scalar alert is `value`.
 */
export function flattenScalars(element: unknown): Record<string, string> {
  const labels: Record<string, string> = {};
  const visit = (value: unknown, name: string): void => {
    if (value === null || value === undefined) return;
    if (Array.isArray(value)) {
      value.forEach((v, i) => visit(v, name === '' ? String(i) : `${name}_${i}`));
    } else if (typeof value === 'object') {
      for (const [key, v] of Object.entries(value)) visit(v, name === '' ? key : `${name}_${key}`);
    } else if (!Object.hasOwn(labels, name || 'value')) {
      labels[name || 'value'] = typeof value === 'string' ? value : String(value);
    }
  };
  visit(element, '');
  return labels;
}

/** JSON with object keys sorted at every level and no spaces: the same content, the same text. */
export function canonicalJson(value: unknown): string {
  if (Array.isArray(value)) return `[${value.map((v) => canonicalJson(v ?? null)).join(',')}]`;
  if (typeof value === 'object' && value !== null) {
    const entries = Object.entries(value).filter(([, v]) => v !== undefined).sort(([a], [b]) => (a < b ? -1 : a > b ? 1 : 0));
    return `{${entries.map(([k, v]) => `${JSON.stringify(k)}:${canonicalJson(v)}`).join(',')}}`;
  }
  return JSON.stringify(value) ?? 'null';
}

/** Whether objects and arrays nest deeper than `limit`, the value itself counted; iterative, so a deep body cannot overflow the stack. */
function depthOver(root: unknown, limit: number): boolean {
  const stack: [unknown, number][] = [[root, 1]];
  while (stack.length > 0) {
    const [value, depth] = stack.pop() as [unknown, number];
    if (typeof value !== 'object' || value === null) continue;
    if (depth > limit) return true;
    for (const child of Object.values(value)) stack.push([child, depth + 1]);
  }
  return false;
}

/** `/body/alerts/0/host` → `alerts[0].host`, the way a person reads the body. */
function where(pointer: string): string {
  const steps = pointer.split('/').slice(2).map((s) => s.replaceAll('~1', '/').replaceAll('~0', '~'));
  return steps.map((s, i) => (/^\d+$/.test(s) ? `[${s}]` : i === 0 ? s : `.${s}`)).join('') || 'body';
}

function kindOf(value: unknown): string {
  if (value === undefined) return 'nothing';
  if (value === null) return 'null';
  if (Array.isArray(value)) return 'an array';
  return typeof value === 'object' ? 'an object' : `${typeof value} ${JSON.stringify(value)}`;
}
