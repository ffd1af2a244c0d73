import { PitcrewError } from '../errors/catalogue.js';
import type { ImportCursor, ImportRequest } from './observation.js';
import { isRecord } from './values.js';

/*
 * What every importer (integrations/<tool>/import.ts) shares: calls to the tool's HTTP API through
 * the import's fetch (the tenant's egress policy and the import's rate limit), the tool's refusal
 * in words with every secret blotted out, and the cursor each importer keeps as JSON.
 */

/**
 * How far behind now an import reads: a tool may record an event a little after its own timestamp
 * (Datadog indexes events asynchronously, PagerDuty and CloudWatch stamp to the second, Zabbix's
 * history syncers commit in batches), so a window that ends at now could close before a late event
 * lands in it, and the next window, starting after it, would never see it.
 */
export const SETTLE_MS = 60_000;

/** Where a time window ends: a minute before now, never before where it starts. */
export function windowEnd(from: number, now: number): number {
  return Math.max(from, now - SETTLE_MS);
}

/** A call to the tool, named for messages: `GET /api/v1/monitor`, `event.get`. */
export interface ToolCall {
  tool: string;
  call: string;
  url: string;
  init: { method: 'GET' | 'POST'; headers: Record<string, string>; body?: string };
  /** What to check, by the HTTP status of a refusal (401: "check the API key"). */
  hints?: Partial<Record<number, string>>;
}

/**
 * The tool's answer as JSON. A non-2xx answer is the tool's refusal (PITCREW_ERR_TOOL_REFUSED, with
 * the status and what it said); no answer at all is PITCREW_ERR_TOOL_UNAVAILABLE. `secrets` are
 * blotted out of both, whatever the tool echoes back.
 */
export async function callJson(request: ImportRequest, call: ToolCall, secrets: ReadonlyArray<string | undefined>): Promise<unknown> {
  let response: Response;
  try {
    response = await request.fetch(call.url, { ...call.init, signal: request.signal });
  } catch (error) {
    if (request.signal.aborted) throw error;
    throw toolUnavailable(call, error, secrets);
  }
  const text = await response.text();
  if (!response.ok) {
    const hint = call.hints?.[response.status];
    throw toolRefused(call, `HTTP ${response.status}${said(text) ? `: ${said(text)}` : ''}${hint ? `; ${hint}` : ''}`, secrets);
  }
  try {
    return JSON.parse(text) as unknown;
  } catch {
    throw toolRefused(call, `HTTP ${response.status} with a body that is not JSON (${clip(text)}): is the URL the tool's API?`, secrets);
  }
}

/** The tool answered, and not with what was asked. */
export function toolRefused(call: Pick<ToolCall, 'tool' | 'call'>, answered: string, secrets: ReadonlyArray<string | undefined>): PitcrewError {
  return new PitcrewError('PITCREW_ERR_TOOL_REFUSED', redact(`${call.tool} refused ${call.call}: ${answered}`, secrets));
}

/** The tool did not answer (refused connection, DNS, TLS, the egress policy, a timeout). */
export function toolUnavailable(call: Pick<ToolCall, 'tool' | 'call' | 'url'>, error: unknown, secrets: ReadonlyArray<string | undefined>): PitcrewError {
  const reason = error instanceof Error ? error.message : String(error);
  return new PitcrewError('PITCREW_ERR_TOOL_UNAVAILABLE', redact(`${call.tool} did not answer ${call.call} at ${origin(call.url)}: ${reason}`, secrets));
}

/** A setting the import cannot start without. */
export function importSettingError(tool: string, field: string, message: string): PitcrewError {
  return new PitcrewError('PITCREW_ERR_VALIDATION', `${tool} import: ${message}`, { fieldErrors: [{ path: `/config/${field}`, message }] });
}

/** The credential is not the shape this tool's import takes. */
export function importSecretError(tool: string, expected: string): PitcrewError {
  return new PitcrewError('PITCREW_ERR_VALIDATION', `${tool} import: the integration's import credential must be ${expected}`, { fieldErrors: [{ path: '/import/secret', message: `expected ${expected}` }] });
}

/** What an error body says, in the fields the tools use: Datadog `errors`, PagerDuty `error.message/errors`, a plain `message`. */
function said(text: string): string {
  let body: unknown;
  try {
    body = JSON.parse(text);
  } catch {
    return clip(text);
  }
  const parts: string[] = [];
  const collect = (value: unknown) => {
    if (typeof value === 'string' && value.trim() !== '') parts.push(value.trim());
    else if (Array.isArray(value)) value.forEach(collect);
  };
  if (isRecord(body)) {
    collect(body.errors);
    if (isRecord(body.error)) {
      collect(body.error.message);
      collect(body.error.errors);
    } else collect(body.error);
    collect(body.message);
  }
  return parts.length > 0 ? clip(parts.join('; ')) : clip(text);
}

function clip(text: string): string {
  const flat = text.replace(/\s+/g, ' ').trim();
  return flat.length > 300 ? `${flat.slice(0, 300)}…` : flat;
}

function origin(url: string): string {
  try {
    const parsed = new URL(url);
    return `${parsed.origin}${parsed.pathname}`;
  } catch {
    return 'its URL';
  }
}

export function redact(text: string, secrets: ReadonlyArray<string | undefined>): string {
  let out = text;
  for (const secret of secrets) if (secret && secret.length >= 4) out = out.split(secret).join('[REDACTED]');
  return out;
}

/** A cursor as an importer writes it: a version and its own fields, as JSON. */
export function writeCursor(state: object): ImportCursor {
  return JSON.stringify({ v: 1, ...state });
}

/**
 * The state an importer stored, checked by the importer's own guard. A cursor it cannot read
 * (another version's, edited by hand) is refused rather than guessed at: importing again from the
 * look-back would repeat what was imported.
 */
export function readCursor<T>(tool: string, cursor: ImportCursor | null, valid: (state: Record<string, unknown>) => state is Record<string, unknown> & T): T | null {
  if (cursor === null) return null;
  let state: unknown;
  try {
    state = JSON.parse(cursor);
  } catch {
    state = undefined;
  }
  if (!isRecord(state) || state.v !== 1 || !valid(state)) {
    throw new PitcrewError('PITCREW_ERR_BAD_CURSOR', `${tool} import: the stored import position is not one this version wrote; reset the integration's import to read from the look-back again`);
  }
  return state;
}

/** Epoch ms of an ISO 8601 time, or null. */
export function isoMs(value: unknown): number | null {
  if (typeof value !== 'string') return null;
  const ms = Date.parse(value);
  return Number.isNaN(ms) ? null : ms;
}

/** An API base URL from the config: http(s), no trailing slash; undefined when absent or not a URL. */
export function baseUrl(value: unknown): string | undefined {
  if (typeof value !== 'string' || value.trim() === '') return undefined;
  try {
    const url = new URL(value.trim());
    if (url.protocol !== 'http:' && url.protocol !== 'https:') return undefined;
    return url.toString().replace(/\/+$/, '');
  } catch {
    return undefined;
  }
}
