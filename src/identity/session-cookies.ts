import type { FastifyReply, FastifyRequest } from 'fastify';
import type { StartedSession } from './sessions.js';

/**
 * The session cookie: HTTP-only (no script reads it), SameSite=Strict (no other site's page sends
 * it), Secure with the __Host- prefix when the service is reached over HTTPS (a browser keeps no
 * Secure cookie from plain http://, as on a first run on a laptop).
 */
export const SESSION_COOKIE = 'pitcrew_session';
const SECURE_SESSION_COOKIE = `__Host-${SESSION_COOKIE}`;
export const CSRF_HEADER = 'x-pitcrew-csrf';

export function setSessionCookies(reply: FastifyReply, started: Pick<StartedSession, 'secret' | 'expiresAt'>, secure: boolean): void {
  const maxAge = Math.max(0, Math.floor((started.expiresAt - Date.now()) / 1000));
  reply.header('set-cookie', cookie(secure, started.secret, maxAge));
}

export function clearSessionCookies(reply: FastifyReply, secure: boolean): void {
  reply.header('set-cookie', cookie(secure, '', 0));
}

function cookie(secure: boolean, value: string, maxAge: number): string {
  const name = secure ? SECURE_SESSION_COOKIE : SESSION_COOKIE;
  return `${name}=${value}; Path=/; Max-Age=${maxAge}; HttpOnly; SameSite=Strict${secure ? '; Secure' : ''}`;
}

/** The session secret the request's cookies carry, if any. */
export function sessionSecretOf(request: FastifyRequest): string | undefined {
  return cookieOf(request, SECURE_SESSION_COOKIE, SESSION_COOKIE);
}

/** The value of the first cookie of these names the request carries; undefined when none has one. */
export function cookieOf(request: FastifyRequest, ...names: string[]): string | undefined {
  for (const part of (request.headers.cookie ?? '').split(';')) {
    const [name, ...value] = part.trim().split('=');
    if (name !== undefined && names.includes(name) && value.length > 0) return value.join('=') || undefined;
  }
  return undefined;
}

/** Whether the browser reached the service over HTTPS (directly, or through a trusted proxy). */
export function isSecureRequest(request: FastifyRequest, publicUrl: string | undefined): boolean {
  return request.protocol === 'https' || (publicUrl?.startsWith('https:') ?? false);
}
