import { Type } from 'typebox';
import { DEFAULT_LIMIT, MAX_LIMIT } from '../store/pagination.js';

export const ProblemSchema = Type.Object(
  {
    type: Type.String(),
    title: Type.String(),
    status: Type.Integer(),
    detail: Type.String(),
    code: Type.String({ description: 'PITCREW_ERR_* (docs/errors.md)' }),
    instance: Type.Optional(Type.String()),
    errors: Type.Optional(Type.Array(Type.Object({ path: Type.String(), message: Type.String() }))),
  },
  { $id: 'Problem', description: 'RFC 9457 problem details (application/problem+json)' },
);

const problemReply = {
  description: 'problem details',
  content: { 'application/problem+json': { schema: Type.Unsafe({ $ref: 'Problem#' }) } },
};

/** OpenAPI entries for the error replies a route can give, under their real media type. */
export function problems(...statuses: number[]): Record<number, typeof problemReply> {
  return Object.fromEntries(statuses.map((status) => [status, problemReply]));
}

export const PageQuery = {
  limit: Type.Optional(Type.Integer({ minimum: 1, maximum: MAX_LIMIT, default: DEFAULT_LIMIT })),
  cursor: Type.Optional(Type.String({ maxLength: 200, description: 'nextCursor of the previous page' })),
};

export const IdParams = Type.Object({ id: Type.String({ format: 'uuid' }) });

export function pageOf<T extends ReturnType<typeof Type.Object>>(item: T) {
  return Type.Object({ items: Type.Array(item), nextCursor: Type.Union([Type.String(), Type.Null()]) });
}

export const bearer: { [scheme: string]: string[] }[] = [{ bearerAuth: [] }, { sessionCookie: [] }];

