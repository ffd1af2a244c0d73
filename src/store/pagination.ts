import { PitcrewError } from '../errors/catalogue.js';
import { isUuid } from './ids.js';

export interface Page<T> {
  items: T[];
  nextCursor: string | null;
}

export interface PageRequest {
  limit: number;
  /** The id after which to continue (ids are UUIDv7, so they order by creation). */
  after: string | undefined;
}

export const DEFAULT_LIMIT = 50;
export const MAX_LIMIT = 1000;

export function pageRequest(query: { limit?: number; cursor?: string }): PageRequest {
  const limit = query.limit ?? DEFAULT_LIMIT;
  if (!query.cursor) return { limit, after: undefined };
  const after = Buffer.from(query.cursor, 'base64url').toString('utf8');
  if (!isUuid(after)) {
    throw new PitcrewError('PITCREW_ERR_BAD_CURSOR', 'cursor must be a nextCursor value returned by this list; start again without cursor');
  }
  return { limit, after };
}

/** Rows were fetched with limit + 1 so we know whether another page exists without a count. */
export function toPage<Row extends { id: string }, T>(rows: Row[], request: PageRequest, present: (row: Row) => T): Page<T> {
  const more = rows.length > request.limit;
  const kept = more ? rows.slice(0, request.limit) : rows;
  const last = kept[kept.length - 1];
  return {
    items: kept.map(present),
    nextCursor: more && last ? Buffer.from(last.id, 'utf8').toString('base64url') : null,
  };
}
