// The management token is kept for this tab's session only (sessionStorage): closing the tab
// signs out, and other tabs sign in on their own. Real sign-in replaces it (identity issue).
const KEY = 'pitcrew.token';

type Listener = () => void;
const listeners = new Set<Listener>();
let lastReason: string | null = null;

export function currentToken(): string | null {
  return sessionStorage.getItem(KEY);
}

export function signIn(token: string): void {
  sessionStorage.setItem(KEY, token);
  lastReason = null;
  listeners.forEach((listener) => listener());
}

/** Forgets the token; `reason` is shown on the sign-in page (e.g. the service refused the token). */
export function signOut(reason: string | null = null): void {
  sessionStorage.removeItem(KEY);
  lastReason = reason;
  listeners.forEach((listener) => listener());
}

/** Why the last session ended, when the service ended it. */
export function signOutReason(): string | null {
  return lastReason;
}

export function subscribeToSession(listener: Listener): () => void {
  listeners.add(listener);
  return () => listeners.delete(listener);
}
