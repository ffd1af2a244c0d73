import type { FieldError } from '../errors/catalogue.js';
import type { AlarmState } from '../engine/alarm-history.js';
import { MAX_SKIPPED_LISTED, unlistedEntry, type AlertPayload, type SkippedEnv } from '../ingest/alert.js';
import { ENV_REFUSAL_TEXT, envEntryBytes, MAX_ENV_BYTES, MAX_ENV_ENTRY_BYTES, MAX_ENV_VARIABLES, refusalForName, type EnvRefusal } from './env.js';

export type ParseResult = { ok: true; payload: AlertPayload } | { ok: false; errors: FieldError[] };

/**
 * Fields read as text. Monitoring tools fill them from templates and send numbers and booleans
 * (`"HostName": 12345`, `"Severity": 4`): any scalar is read as its string form, null as absent.
 */
const SCALAR_FIELDS: ReadonlySet<string> = new Set(['HostName', 'hostname', 'AppName', 'application', 'AlarmName', 'Severity', 'Source', 'State']);

/** The payload's host is stored as a column, indexed and looked up: held to what a host name can be. */
const HOST_FIELDS = ['HostName', 'hostname'] as const;

/** A DNS name's limit (RFC 1035); PostgreSQL's indexes also refuse values past ~2,700 bytes. */
export const MAX_HOST_NAME_LENGTH = 255;

/** The words monitoring tools use for an alarm's two states (Alertmanager, Monasca, Nagios, Zabbix). */
const ALARM_STATES: Record<string, AlarmState> = {
  firing: 'firing', alarm: 'firing', problem: 'firing',
  resolved: 'resolved', ok: 'resolved', recovery: 'resolved',
};

/**
 * Reads a webhook body (DESIGN.md §3). Every field is optional; the known text fields take any
 * scalar, Act a boolean, MetaData an object. The older form's `hostname` and `application` stand
 * for `HostName` and `AppName`.
 */
export function parseAlertPayload(body: unknown): ParseResult {
  if (body === undefined || body === null) return { ok: true, payload: understand({}) };
  if (typeof body !== 'object' || Array.isArray(body)) {
    return { ok: false, errors: [{ path: '/body', message: 'the body must be a JSON object such as {"HostName":"web-1"}' }] };
  }
  const raw = body as Record<string, unknown>;
  const errors: FieldError[] = [];
  for (const field of SCALAR_FIELDS) {
    if (typeof raw[field] === 'object' && raw[field] !== null) {
      errors.push({ path: `/body/${field}`, message: `${field} must be a string, number or boolean, got ${describe(raw[field])}` });
    }
  }
  for (const field of HOST_FIELDS) {
    const problem = typeof raw[field] === 'string' ? hostNameProblem(raw[field]) : undefined;
    if (problem) errors.push({ path: `/body/${field}`, message: `${field} ${problem}` });
  }
  if (raw.Act !== undefined && actOf(raw.Act) === undefined) {
    errors.push({ path: '/body/Act', message: `Act must be true or false (a JSON boolean, or the string "true" or "false"), got ${describe(raw.Act)}; leave it out to act` });
  }
  if (raw.MetaData !== undefined && !isPlainObject(raw.MetaData)) {
    errors.push({ path: '/body/MetaData', message: `MetaData must be an object of key/value pairs, got ${describe(raw.MetaData)}` });
  }
  return errors.length ? { ok: false, errors } : { ok: true, payload: understand(raw) };
}

function understand(raw: Record<string, unknown>): AlertPayload {
  const text = (name: string) => textOf(raw[name]);
  const { env, skippedEnv } = environmentOf(raw);
  return {
    raw,
    hostName: text('HostName') ?? text('hostname'),
    appName: text('AppName') ?? text('application'),
    alarmName: text('AlarmName'),
    severity: text('Severity'),
    source: text('Source'),
    act: raw.Act === undefined || actOf(raw.Act)!,
    alarmState: alarmStateOf(raw),
    env,
    skippedEnv,
  };
}

/** A scalar field's string form; undefined when absent or null. */
function textOf(value: unknown): string | undefined {
  return value === undefined || value === null ? undefined : String(value);
}

/**
 * Act decides whether a fix runs, so it is never guessed: true or false, as a JSON boolean or as
 * the string "true" or "false" (templating tools send every value as a string). Anything else,
 * null included, is undefined: refused rather than read as acting or as a dry run.
 */
function actOf(value: unknown): boolean | undefined {
  if (typeof value === 'boolean') return value;
  const word = typeof value === 'string' ? value.trim().toLowerCase() : undefined;
  return word === 'true' ? true : word === 'false' ? false : undefined;
}

function alarmStateOf(raw: Record<string, unknown>): AlarmState | undefined {
  const said = textOf(raw.State) ?? textOf(raw.state) ?? textOf(raw.status);
  const word = said?.trim().toLowerCase();
  // hasOwn: "constructor" is no alarm state, whatever Object.prototype holds.
  return word !== undefined && Object.hasOwn(ALARM_STATES, word) ? ALARM_STATES[word] : undefined;
}

/** Top-level scalars, then the pairs inside MetaData; aliases also export their canonical name. */
function environmentOf(raw: Record<string, unknown>): { env: Record<string, string>; skippedEnv: SkippedEnv[] } {
  const env: Record<string, string> = {};
  const skippedEnv: SkippedEnv[] = [];
  let count = 0;
  let bytes = 0;
  let unlisted = 0;
  const skip = (name: string, refusal: EnvRefusal) => {
    if (skippedEnv.length < MAX_SKIPPED_LISTED) skippedEnv.push({ name, reason: ENV_REFUSAL_TEXT[refusal] });
    else unlisted += 1;
  };
  const offer = (name: string, value: unknown, fromMetaData: boolean) => {
    const refusal = refusalFor(name, value, fromMetaData && Object.hasOwn(env, name), count);
    if (refusal) return skip(name, refusal);
    const text = value === null ? '' : String(value);
    const size = envEntryBytes(name, text);
    const tooBig = sizeRefusal(size, bytes);
    if (tooBig) return skip(name, tooBig);
    env[name] = text;
    count += 1;
    bytes += size;
  };

  // Own keys in Object.entries' order, without a [name, value] array per field.
  for (const name of Object.keys(raw)) {
    const value = raw[name];
    // A known field sent as null is absent: no variable, and its older alias may stand in.
    if (name !== 'MetaData' && !(value === null && SCALAR_FIELDS.has(name))) offer(name, value, false);
  }
  // The canonical name passes the same checks as any other: a NUL or the cap applies to it too.
  if (textOf(raw.hostname) !== undefined && textOf(raw.HostName) === undefined) offer('HostName', raw.hostname, false);
  if (textOf(raw.application) !== undefined && textOf(raw.AppName) === undefined) offer('AppName', raw.application, false);
  if (isPlainObject(raw.MetaData)) {
    const metaData = raw.MetaData;
    for (const name of Object.keys(metaData)) offer(name, metaData[name], true);
  }
  if (unlisted > 0) skippedEnv.push(unlistedEntry(unlisted));
  return { env, skippedEnv };
}

function refusalFor(name: string, value: unknown, duplicate: boolean, count: number): EnvRefusal | undefined {
  const byName = refusalForName(name);
  if (byName) return byName;
  if (value !== null && typeof value === 'object') return 'not_scalar';
  if (typeof value === 'string' && value.includes('\u0000')) return 'nul_character';
  if (duplicate) return 'duplicate';
  if (count >= MAX_ENV_VARIABLES) return 'too_many';
  return undefined;
}

/** A variable the kernel would not pass (spawn fails with E2BIG: env.ts). */
function sizeRefusal(size: number, usedBytes: number): EnvRefusal | undefined {
  if (size > MAX_ENV_ENTRY_BYTES) return 'too_long';
  if (usedBytes + size > MAX_ENV_BYTES) return 'env_full';
  return undefined;
}

/** Why a payload's host name cannot name a host, if it cannot. PostgreSQL refuses NUL in text. */
function hostNameProblem(name: string): string | undefined {
  if (name.includes('\u0000')) return 'must not contain a NUL character (\\u0000)';
  if (name.length > MAX_HOST_NAME_LENGTH) return `is ${name.length} characters long; a host name has at most ${MAX_HOST_NAME_LENGTH}`;
  return undefined;
}

function isPlainObject(value: unknown): value is Record<string, unknown> {
  return typeof value === 'object' && value !== null && !Array.isArray(value);
}

function describe(value: unknown): string {
  if (value === null) return 'null';
  if (Array.isArray(value)) return 'an array';
  return typeof value === 'object' ? 'an object' : `${typeof value} ${JSON.stringify(value)}`;
}
