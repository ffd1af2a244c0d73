import { keepPreviousData, useInfiniteQuery } from '@tanstack/react-query';
import { api, type Query } from './client';
import type { Page } from './types';

export interface LivePagesOptions {
  pageSize: number;
  /** Lists refresh on their own: what they show changes while you look. */
  refetchMs: number;
  /** While a filter is typed, the last list stays on screen instead of a loading state. */
  keepPrevious?: boolean;
}

/** A cursor-paged list of the API (`{items, nextCursor}`), refreshed every `refetchMs`. */
export function useLivePages<T>(queryKey: readonly unknown[], path: string, query: Query, options: LivePagesOptions) {
  return useInfiniteQuery({
    queryKey,
    queryFn: ({ pageParam, signal }) => api<Page<T>>(path, { query: { ...query, cursor: pageParam, limit: options.pageSize }, signal }),
    initialPageParam: undefined as string | undefined,
    getNextPageParam: (page) => page.nextCursor ?? undefined,
    refetchInterval: options.refetchMs,
    placeholderData: options.keepPrevious ? keepPreviousData : undefined,
  });
}
