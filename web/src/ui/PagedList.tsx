import type { InfiniteData, UseInfiniteQueryResult } from '@tanstack/react-query';
import type { ReactNode } from 'react';
import type { Page } from '../api/types';
import { LoadMore } from './LoadMore';
import { Loadable } from './states';

interface PagedListProps<T> {
  query: UseInfiniteQueryResult<InfiniteData<Page<T>>>;
  /** Plural noun for messages: "rules", "hosts". */
  what: string;
  empty: ReactNode;
  /** Every item loaded so far, the pages joined. */
  children: (items: T[]) => ReactNode;
}

/** A paged list in its states (loading, failed, empty), then its items and a Load more button. */
export function PagedList<T>({ query, what, empty, children }: PagedListProps<T>) {
  return (
    <Loadable query={query} what={what} isEmpty={(data) => data.pages[0]!.items.length === 0} empty={empty}>
      {(data) => (
        <>
          {children(data.pages.flatMap((page) => page.items))}
          <LoadMore query={query} />
        </>
      )}
    </Loadable>
  );
}
