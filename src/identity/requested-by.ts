import { Type, type Static } from 'typebox';
import type { Principal } from './principal.js';

/**
 * Who asked for something the service recorded (an event raised by Run now): a personal access
 * token (by id, its name when it was used, and its user), or a signed-in person (their session).
 */
export const RequestedBy = Type.Union([
  Type.Object({
    type: Type.Literal('token'),
    id: Type.String({ description: "the personal access token's id" }),
    name: Type.String({ description: "the token's name when it asked" }),
    userId: Type.Optional(Type.String({ description: 'the user the token belongs to' })),
  }),
  Type.Object({
    type: Type.Literal('user'),
    id: Type.String({ description: "the user's id" }),
    email: Type.Union([Type.String(), Type.Null()], { description: "the user's e-mail when they asked" }),
    via: Type.String({ description: 'how they signed in: password, oidc, saml or link' }),
  }),
], { description: 'who asked: a personal access token, or a person signed in to the UI' });

export type RequestedBy = Static<typeof RequestedBy>;

export function requestedByOf(principal: Principal): RequestedBy {
  if (principal.tokenId !== null) return { type: 'token', id: principal.tokenId, name: principal.tokenName ?? '', userId: principal.userId };
  return { type: 'user', id: principal.userId, email: principal.email, via: principal.via };
}
