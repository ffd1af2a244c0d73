import type { InjectOptions, LightMyRequestResponse } from 'fastify';
import { expect } from 'vitest';
import type { Role } from '../../src/identity/roles.js';
import type { TestEnv } from './app.js';

export const PASSWORD = 'correct horse battery staple';

/** A person signed in to the UI: the session cookie and its CSRF token. */
export interface Browser {
  userId: string;
  email: string;
  cookie: string;
  csrf: string;
  /** A call as the UI makes it: the cookie, and the CSRF header unless told not to. */
  call(method: InjectOptions['method'], url: string, body?: unknown, options?: { csrf?: boolean; headers?: Record<string, string> }): Promise<LightMyRequestResponse>;
}

/** Invites the e-mail with the role (as the bootstrap owner's token) and accepts it: the new member's session. */
export async function invite(env: TestEnv, email: string, role: Role, tenantToken = env.tenant.token): Promise<Browser & { inviteUrl: string }> {
  const invited = await env.api('POST', '/api/v1/users', { email, role }, tenantToken);
  expect(invited.statusCode, invited.body).toBe(201);
  const { inviteUrl, id } = invited.json() as { inviteUrl: string; id: string };
  const accepted = await env.app.server.inject({ method: 'POST', url: '/api/v1/auth/accept', payload: { invite: inviteUrl.split('/').pop(), password: PASSWORD } });
  expect(accepted.statusCode, accepted.body).toBe(200);
  return { ...browserOf(env, accepted, id, email), inviteUrl };
}

/** The browser of a reply that set a session cookie (sign-in, accept). */
export function browserOf(env: TestEnv, reply: LightMyRequestResponse, userId: string, email: string): Browser {
  const setCookie = String(reply.headers['set-cookie']);
  const cookie = setCookie.split(';')[0]!;
  const csrf = (reply.json() as { csrfToken: string }).csrfToken;
  return {
    userId, email, cookie, csrf,
    call: (method, url, body, options = {}) => env.app.server.inject({
      method, url,
      headers: {
        cookie, ...(options.csrf === false ? {} : { 'x-pitcrew-csrf': csrf }),
        ...(body === undefined ? {} : { 'content-type': 'application/json' }), ...options.headers,
      },
      ...(body === undefined ? {} : { payload: JSON.stringify(body) }),
    }),
  };
}

export async function signIn(env: TestEnv, email: string, password = PASSWORD, options: { totp?: string; ip?: string } = {}): Promise<LightMyRequestResponse> {
  const payload = { email, password, ...(options.totp ? { totp: options.totp } : {}) };
  return env.app.server.inject({ method: 'POST', url: '/api/v1/auth/login', payload, remoteAddress: options.ip ?? '127.0.0.1' });
}
