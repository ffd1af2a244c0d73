import { Type, type Static } from 'typebox';
import type { Principal } from './tokens.js';

/**
 * Who asked for something the service recorded (an event raised by Run now): today the
 * management token of the call, by id and by its name when it was used. A union on `type`, so a
 * signed-in user becomes one more member (`{type: "user", id, email}`) and older records still read.
 */
export const RequestedBy = Type.Union([
  Type.Object({
    type: Type.Literal('token'),
    id: Type.String({ description: "the management token's id" }),
    name: Type.String({ description: "the token's name when it asked" }),
  }),
], { description: 'who asked: the management token of the call' });

export type RequestedBy = Static<typeof RequestedBy>;

export function requestedByOf(principal: Principal): RequestedBy {
  return { type: 'token', id: principal.tokenId, name: principal.tokenName };
}
