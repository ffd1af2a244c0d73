import { hash, randomBytes } from 'node:crypto';
import type { FastifyReply, FastifyRequest } from 'fastify';
import { cookieOf } from '../session-cookies.js';

/**
 * A short-lived cookie that ties a sign-in's answer to the browser that started it
 * (sign-in.ts startedElsewhere). Only its hash is stored with the pending sign-in.
 * OpenID providers send the browser back with a top-level GET, which SameSite=Lax lets through;
 * a SAML IdP posts from its own site, which only SameSite=None (Secure, so over HTTPS) lets
 * through: over plain HTTP a SAML sign-in goes without this tie.
 */
const COOKIE = 'pitcrew_sso';
const PATH = '/api/v1/auth/';
const MAX_AGE_SECONDS = 600;

/** Sets a new cookie on the reply; its hash, for the pending sign-in, or undefined when it cannot come back. */
export function tieBrowser(reply: FastifyReply, type: 'oidc' | 'saml', secure: boolean): string | undefined {
  if (type === 'saml' && !secure) return undefined;
  const value = randomBytes(24).toString('base64url');
  const sameSite = type === 'saml' ? 'None' : 'Lax';
  reply.header('set-cookie', `${COOKIE}=${value}; Path=${PATH}; Max-Age=${MAX_AGE_SECONDS}; HttpOnly; SameSite=${sameSite}${secure ? '; Secure' : ''}`);
  return hashOf(value);
}

/** Removes the cookie once its sign-in is answered. */
export function untieBrowser(reply: FastifyReply): void {
  reply.header('set-cookie', `${COOKIE}=; Path=${PATH}; Max-Age=0; HttpOnly; SameSite=Lax`);
}

/** The hash of the cookie the request carries, if any. */
export function browserOf(request: FastifyRequest): string | undefined {
  const value = cookieOf(request, COOKIE);
  return value === undefined ? undefined : hashOf(value);
}

function hashOf(value: string): string {
  return hash('sha256', value, 'hex');
}
