// Two ways to be signed in (issue 37). A person signs in with a password (or single sign-on): the
// service keeps the session in an HTTP-only cookie the page cannot read, and the CSRF token that
// must go with every change is kept here, in memory only (read again from GET /me after a reload).
// A personal access token pasted on the sign-in page is kept for this tab only (sessionStorage)
// and sent as a Bearer token: closing the tab signs out.
const TOKEN_KEY = 'pitcrew.token';
// Not a secret: only that this browser may hold a session cookie, so a first visit does not ask
// the service (and log a refusal) for nothing. The cookie itself says whether it is still good.
const COOKIE_HINT_KEY = 'pitcrew.session';

export type SessionKind = 'token' | 'cookie';

type Listener = () => void;
const listeners = new Set<Listener>();
let lastReason: string | null = null;
let lastKind: SessionKind | null = null;
let csrf: string | null = null;
/** Whether the cookie session is known good (true), known absent (false), or not asked yet (null). */
let cookieSession: boolean | null = null;

function changed(): void {
  listeners.forEach((listener) => listener());
}

export function currentToken(): string | null {
  return sessionStorage.getItem(TOKEN_KEY);
}

export function csrfToken(): string | null {
  return csrf;
}

/** How this tab is signed in now, or null; 'unknown' while a cookie session may exist but is not checked yet. */
export function sessionKind(): SessionKind | 'unknown' | null {
  if (currentToken()) return 'token';
  if (cookieSession === true) return 'cookie';
  if (cookieSession === null && localStorage.getItem(COOKIE_HINT_KEY)) return 'unknown';
  return null;
}

/** Keeps a personal access token for this tab. */
export function signInWithToken(token: string): void {
  sessionStorage.setItem(TOKEN_KEY, token);
  lastReason = null;
  changed();
}

/** The service set the session cookie (sign-in, invitation, SSO) or confirmed it (GET /me): keep its CSRF token. */
export function cookieSessionStarted(csrfToken: string | null): void {
  sessionStorage.removeItem(TOKEN_KEY);
  csrf = csrfToken;
  cookieSession = true;
  localStorage.setItem(COOKIE_HINT_KEY, '1');
  lastReason = null;
  changed();
}

/**
 * A single sign-on is under way: the service sets the cookie at the end of a redirect, where no
 * page of the app sees it, so the page it lands on must ask GET /me (a fresh browser would not).
 */
export function cookieSessionExpected(): void {
  localStorage.setItem(COOKIE_HINT_KEY, '1');
}

/** Forgets the session; `reason` is shown on the sign-in page (e.g. the service refused the token). */
export function signOut(reason: string | null = null): void {
  lastKind = currentToken() ? 'token' : cookieSession || localStorage.getItem(COOKIE_HINT_KEY) ? 'cookie' : lastKind;
  sessionStorage.removeItem(TOKEN_KEY);
  localStorage.removeItem(COOKIE_HINT_KEY);
  csrf = null;
  cookieSession = false;
  lastReason = reason;
  changed();
}

/** Why the last session ended, when the service ended it. */
export function signOutReason(): string | null {
  return lastReason;
}

/** How the last session was signed in, to offer the same way again. */
export function lastSessionKind(): SessionKind | null {
  return lastKind;
}

export function subscribeToSession(listener: Listener): () => void {
  listeners.add(listener);
  return () => listeners.delete(listener);
}

