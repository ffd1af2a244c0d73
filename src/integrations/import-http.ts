import type { PolicyFetch } from '../egress/fetch.js';
import { isRecord } from './values.js';

/**
 * How importers (integrations/<tool>/import.ts) call their tool and say what went wrong: every
 * error names the tool, the URL (without credentials: no user info, secret-named query values
 * masked) and what the tool answered, so a person can act on it from the integration's status.
 */
export class ToolImportError extends Error {
  constructor(message: string, readonly status?: number) {
    super(message);
    this.name = 'ToolImportError';
  }
}

/** Query parameters that carry credentials in some tools' URLs (api_key, token, …). */
const SECRET_PARAM = /(key|token|secret|password|signature|auth)/i;
/** The most of a tool's error answer an error message quotes. */
const ANSWER_CHARS = 300;

/** A URL as it may be shown: no user info, credential-like query values masked. */
export function shownUrl(raw: string): string {
  let url: URL;
  try {
    url = new URL(raw);
  } catch {
    return '(not a URL)';
  }
  url.username = '';
  url.password = '';
  for (const name of [...url.searchParams.keys()]) if (SECRET_PARAM.test(name)) url.searchParams.set(name, '***');
  return url.toString();
}

/** The read call of an import: GET, JSON back; anything else is a ToolImportError that says what the tool did. */
export async function getJson(fetch: PolicyFetch, tool: string, url: string, headers: Record<string, string>, signal: AbortSignal): Promise<unknown> {
  let response: Response;
  try {
    response = await fetch(url, { method: 'GET', headers: { accept: 'application/json', ...headers }, signal });
  } catch (error) {
    if (signal.aborted || error instanceof ToolImportError) throw error;
    throw new ToolImportError(`${tool} at ${shownUrl(url)} did not answer (${causeOf(error)}): check the address and that pitcrew can reach it`);
  }
  if (!response.ok) throw await refusal(tool, url, response);
  const text = await response.text();
  try {
    return JSON.parse(text) as unknown;
  } catch {
    throw new ToolImportError(`${tool} at ${shownUrl(url)} answered HTTP ${response.status} with a body that is not JSON (${quote(text)}): is the address the tool's API?`, response.status);
  }
}

/** A tool's refusal as a message: status, what it said, and what to check. */
export async function refusal(tool: string, url: string, response: Response): Promise<ToolImportError> {
  const text = await response.text().catch(() => '');
  const said = answerText(text);
  const hint = response.status === 401 ? 'the credential was refused: set the import’s secret again'
    : response.status === 403 ? 'the credential lacks a read permission this import needs (docs/incidents-import.md)'
      : response.status === 404 ? 'check the tool’s address in the integration’s settings'
        : response.status === 429 ? 'the tool is limiting pitcrew’s calls: lower the import’s requestsPerSecond'
          : 'try again later, or check the tool’s logs';
  return new ToolImportError(`${tool} at ${shownUrl(url)} answered HTTP ${response.status}${said ? `: ${said}` : ''} (${hint})`, response.status);
}

/** What an error answer says, short: the message field of a JSON error, else the text. */
function answerText(text: string): string {
  const trimmed = text.trim();
  if (trimmed === '') return '';
  try {
    const json: unknown = JSON.parse(trimmed);
    if (isRecord(json)) {
      for (const key of ['error', 'message', 'description', 'title', 'errors']) {
        const value = json[key];
        if (typeof value === 'string' && value !== '') return quote(value);
        if (isRecord(value) && typeof value.message === 'string') return quote(value.message);
      }
    }
  } catch {
    // not JSON: the text itself
  }
  return quote(trimmed);
}

function quote(text: string): string {
  const flat = text.replace(/\s+/g, ' ').trim();
  return flat.length > ANSWER_CHARS ? `${flat.slice(0, ANSWER_CHARS)}…` : flat;
}

function causeOf(error: unknown): string {
  if (!(error instanceof Error)) return String(error);
  const cause = error.cause instanceof Error ? error.cause.message : undefined;
  return cause ?? error.message;
}

/** An ISO time of epoch ms, as the tools' query parameters take it. */
export function isoOf(ms: number): string {
  return new Date(ms).toISOString();
}
