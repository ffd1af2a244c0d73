import { csrfToken, currentToken, sessionKind, signOut } from '../auth/session';
import { ApiProblem, networkProblem, problemFrom } from './problem';

export type Query = Record<string, string | number | boolean | string[] | undefined | null>;

export interface RequestOptions {
  method?: 'GET' | 'POST' | 'PUT' | 'PATCH' | 'DELETE';
  body?: unknown;
  query?: Query;
  signal?: AbortSignal;
  /** A token to try instead of the session's (sign-in checks one before keeping it). */
  token?: string;
  /** The first GET /me of a cookie session that may have ended: its 401 is the answer, not a session ending. */
  checkingSession?: boolean;
}

export function apiUrl(path: string, query: Query = {}): string {
  const params = new URLSearchParams();
  for (const [name, value] of Object.entries(query)) {
    if (value === undefined || value === null || value === '') continue;
    for (const one of Array.isArray(value) ? value : [value]) params.append(name, String(one));
  }
  const search = params.toString();
  return `/api/v1${path}${search ? `?${search}` : ''}`;
}

/** The raw reply of an authenticated call, for streams and downloads; errors as ApiProblem. */
export async function apiFetch(path: string, options: RequestOptions = {}): Promise<Response> {
  const token = options.token ?? currentToken();
  const method = options.method ?? 'GET';
  const headers: Record<string, string> = { accept: 'application/json' };
  if (token) headers.authorization = `Bearer ${token}`;
  // A session cookie goes with every call of this origin; a change also needs the session's CSRF token.
  else if (method !== 'GET' && csrfToken()) headers['x-pitcrew-csrf'] = csrfToken()!;
  if (options.body !== undefined) headers['content-type'] = 'application/json';
  let response: Response;
  try {
    response = await fetch(apiUrl(path, options.query), {
      method,
      headers,
      body: options.body === undefined ? undefined : JSON.stringify(options.body),
      signal: options.signal,
    });
  } catch (error) {
    if (options.signal?.aborted) throw error;
    throw networkProblem(error);
  }
  if (response.ok) return response;
  const problem = await problemFrom(response);
  // A session that stopped working ends, once: the first refusal says why, and the calls cut
  // short by the sign-out do not replace it. A candidate token is only refused.
  if (response.status === 401 && !options.token && !options.checkingSession && stillSignedInAs(token)) signOut(problem.detail);
  throw problem;
}

function stillSignedInAs(token: string | null): boolean {
  return token !== null ? currentToken() === token : sessionKind() === 'cookie';
}

/** A JSON call to the management API. */
export async function api<T>(path: string, options: RequestOptions = {}): Promise<T> {
  const response = await apiFetch(path, options);
  if (response.status === 204) return undefined as T;
  return (await response.json()) as T;
}

export { ApiProblem };
