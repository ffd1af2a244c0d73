import { PitcrewError, type ErrorCode } from '../errors/catalogue.js';
import type { ImportCursor, ImportRequest } from './observation.js';
import { isRecord } from './values.js';

/*
 * The one way importers (integrations/<tool>/import.ts) call their tool and say what went wrong:
 * every call goes through the import's fetch (the tenant's egress policy, the import's rate limit,
 * a timeout per call and the read-only guard: src/imports/read-only.ts); every failure is a
 * ToolImportError that names the tool, the call and where it went (origin and path: no user info,
 * no query, whose values may be keys), what the tool answered and what to check, with every secret
 * blotted out whatever the tool echoes back. Also the paging helpers the importers share: the
 * settled end of a time window and the cursor each importer keeps as JSON.
 */

/**
 * An import's failure in words a person can act on from the integration's status. A PitcrewError
 * (the tool refused: PITCREW_ERR_TOOL_REFUSED; it did not answer: PITCREW_ERR_TOOL_UNAVAILABLE);
 * `toolStatus` is the HTTP status the tool answered, when it answered.
 */
export class ToolImportError extends PitcrewError {
  readonly toolStatus: number | undefined;

  constructor(message: string, options: { toolStatus?: number; code?: ErrorCode } = {}) {
    super(options.code ?? 'PITCREW_ERR_TOOL_REFUSED', message);
    this.name = 'ToolImportError';
    this.toolStatus = options.toolStatus;
  }
}

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

/** One call to a tool's HTTP API. */
export interface ToolCall {
  /** The tool as people name it: "Datadog", "Prometheus". */
  tool: string;
  url: string;
  /** GET unless said; a POST only for a tool's read-only calls (ImportNeeds.readOnlyCall). */
  method?: 'GET' | 'POST';
  headers?: Record<string, string>;
  body?: string;
  /** The operation, where the URL does not name it: a JSON-RPC method (`event.get`), an AWS action. */
  operation?: string;
  /** What to check, by the HTTP status of a refusal (401: "check the API key"), before the general hints. */
  hints?: Partial<Record<number, string>>;
  /** The credentials sent, blotted out of every message. */
  secrets?: ReadonlyArray<string | undefined>;
}

/** What a refusal of each status asks a person to check, when the tool's importer says nothing more precise. */
const GENERAL_HINTS: Partial<Record<number, string>> = {
  401: 'the credential was refused: set the import’s secret again',
  403: 'the credential lacks a read permission this import needs (docs/incidents-import.md)',
  404: 'check the tool’s address in the integration’s settings',
  429: 'the tool is limiting pitcrew’s calls: the next import continues, or lower the import’s requestsPerSecond',
};
/** The most of a tool's answer a message quotes. */
const ANSWER_CHARS = 300;

/**
 * The tool's answer to a call, as JSON. A non-2xx answer, or a body that is not JSON, is the tool's
 * refusal (with its status, what it said and what to check); no answer at all (refused connection,
 * DNS, TLS, the egress policy, the call's timeout) is the tool unavailable. An abort of the import
 * itself (the service stopping) is passed on as it is.
 */
export async function callJson(request: Pick<ImportRequest, 'fetch' | 'signal'>, call: ToolCall): Promise<unknown> {
  const method = call.method ?? 'GET';
  let response: Response;
  try {
    response = await request.fetch(call.url, { method, headers: { accept: 'application/json', ...call.headers }, ...(call.body === undefined ? {} : { body: call.body }), signal: request.signal });
  } catch (error) {
    if (request.signal.aborted || error instanceof PitcrewError) throw error;
    throw toolUnavailable(call, error);
  }
  const text = await response.text().catch(() => '');
  if (!response.ok) {
    const hint = call.hints?.[response.status] ?? GENERAL_HINTS[response.status] ?? (response.status >= 500 ? 'try again later, or check the tool’s logs' : undefined);
    const said = answerText(text);
    throw toolRefused(call, `HTTP ${response.status}${said ? `: ${said}` : ''}${hint ? `; ${hint}` : ''}`, response.status);
  }
  try {
    return JSON.parse(text) as unknown;
  } catch {
    throw toolRefused(call, `HTTP ${response.status} with a body that is not JSON (${clip(text)}): is the address the tool's API?`, response.status);
  }
}

/** The most bytes of an image a graph source keeps (graph-source.ts): what a snapshot stores at most (snapshots/repository.ts); a picture at e-mail width is far smaller. */
export const MAX_IMAGE_BYTES = 2 * 1024 * 1024;

/**
 * The tool's answer to a call, as the bytes of an image (a graph the tool rendered): as callJson,
 * a non-2xx answer is the tool's refusal with what it said, no answer is the tool unavailable; an
 * answer that is not an image of `accept`'s types, or is larger than `maxBytes`, is a refusal too.
 */
export async function callImage(request: Pick<ImportRequest, 'fetch' | 'signal'>, call: ToolCall, accept: readonly string[] = ['image/png'], maxBytes = MAX_IMAGE_BYTES): Promise<{ contentType: string; bytes: Uint8Array }> {
  let response: Response;
  try {
    response = await request.fetch(call.url, { method: call.method ?? 'GET', headers: { accept: accept.join(', '), ...call.headers }, ...(call.body === undefined ? {} : { body: call.body }), signal: request.signal });
  } catch (error) {
    if (request.signal.aborted || error instanceof PitcrewError) throw error;
    throw toolUnavailable(call, error);
  }
  const bytes = new Uint8Array(await response.arrayBuffer().catch(() => new ArrayBuffer(0)));
  const contentType = (response.headers.get('content-type') ?? '').split(';')[0]!.trim().toLowerCase();
  if (!response.ok) {
    const hint = call.hints?.[response.status] ?? GENERAL_HINTS[response.status] ?? (response.status >= 500 ? 'try again later, or check the tool’s logs' : undefined);
    const said = answerText(Buffer.from(bytes).toString('utf8'));
    throw toolRefused(call, `HTTP ${response.status}${said ? `: ${said}` : ''}${hint ? `; ${hint}` : ''}`, response.status);
  }
  if (!accept.includes(contentType)) {
    const said = contentType.startsWith('text/') || contentType.endsWith('json') ? ` (${answerText(Buffer.from(bytes).toString('utf8'))})` : '';
    throw toolRefused(call, `HTTP ${response.status} with ${contentType || 'no content type'}${said}, not an image (${accept.join(' or ')})`, response.status);
  }
  if (bytes.byteLength > maxBytes) throw toolRefused(call, `an image of ${bytes.byteLength} bytes, over the ${maxBytes} pitcrew keeps`, response.status);
  if (bytes.byteLength === 0) throw toolRefused(call, `HTTP ${response.status} with an empty image`, response.status);
  return { contentType, bytes };
}

/** The tool answered, and not with what was asked: `answered` says how. */
export function toolRefused(call: Pick<ToolCall, 'tool' | 'url' | 'method' | 'operation' | 'secrets'>, answered: string, toolStatus?: number): ToolImportError {
  return new ToolImportError(redact(`${call.tool} refused ${label(call)}: ${answered}`, call.secrets), toolStatus === undefined ? {} : { toolStatus });
}

/** The tool did not answer (refused connection, DNS, TLS, the egress policy, the call's timeout). */
export function toolUnavailable(call: Pick<ToolCall, 'tool' | 'url' | 'method' | 'operation' | 'secrets'>, error: unknown): ToolImportError {
  const reason = error instanceof Error && error.name === 'TimeoutError' ? 'no answer in time' : causeOf(error);
  return new ToolImportError(redact(`${call.tool} did not answer ${label(call)}: ${reason}; check the address and that pitcrew can reach it`, call.secrets), { code: 'PITCREW_ERR_TOOL_UNAVAILABLE' });
}

/** A setting the import cannot start without. */
export function importSettingError(tool: string, field: string, message: string): PitcrewError {
  return new PitcrewError('PITCREW_ERR_VALIDATION', `${tool} import: ${message}`, { fieldErrors: [{ path: `/config/${field}`, message }] });
}

/** A graph snapshot's setting (the integration's config, the rule's graphs, the graph secret) a tool's graph source cannot read with. */
export function graphSettingError(tool: string, field: string, message: string): PitcrewError {
  return new PitcrewError('PITCREW_ERR_VALIDATION', `${tool} graph: ${message}`, { fieldErrors: [{ path: `/${field}`, message }] });
}

/** The credential is not the shape this tool's import takes. */
export function importSecretError(tool: string, expected: string): PitcrewError {
  return new PitcrewError('PITCREW_ERR_VALIDATION', `${tool} import: the integration's import credential must be ${expected}`, { fieldErrors: [{ path: '/import/secret', message: `expected ${expected}` }] });
}

/** The call as messages name it: `GET https://api.datadoghq.com/api/v2/events`, `event.get at https://zabbix/api_jsonrpc.php`. */
function label(call: Pick<ToolCall, 'url' | 'method' | 'operation'>): string {
  const where = shownUrl(call.url);
  return call.operation ? `${call.operation} at ${where}` : `${call.method ?? 'GET'} ${where}`;
}

/** A URL as it may be shown: origin and path, without user info or query (which may carry keys). */
export function shownUrl(raw: string): string {
  if (!URL.canParse(raw)) return '(not a URL)';
  const url = new URL(raw);
  return `${url.origin}${url.pathname}`;
}

/** What an error body says, in the fields the tools use: Datadog `errors`, PagerDuty `error.message/errors`, Grafana's data source query `results.<refId>.error`, a plain `message`. */
function answerText(text: string): string {
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
    else if (isRecord(value)) collect(value.message);
  };
  if (isRecord(body)) {
    collect(body.errors);
    if (isRecord(body.results)) for (const result of Object.values(body.results)) if (isRecord(result)) collect(result.error);
    if (isRecord(body.error)) collect(body.error.errors);
    collect(body.error);
    collect(body.message);
    collect(body.description);
    collect(body.title);
  }
  return parts.length > 0 ? clip([...new Set(parts)].join('; ')) : clip(text);
}

function clip(text: string): string {
  const flat = text.replace(/\s+/g, ' ').trim();
  return flat.length > ANSWER_CHARS ? `${flat.slice(0, ANSWER_CHARS)}…` : flat;
}

function causeOf(error: unknown): string {
  if (!(error instanceof Error)) return String(error);
  return error.cause instanceof Error ? error.cause.message : error.message;
}

/** The text with each secret (of 4 characters or more) replaced by [REDACTED]. */
export function redact(text: string, secrets: ReadonlyArray<string | undefined> = []): string {
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
