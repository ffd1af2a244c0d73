import type { UseInfiniteQueryResult } from '@tanstack/react-query';

export function LoadMore({ query }: { query: Pick<UseInfiniteQueryResult, 'hasNextPage' | 'isFetchingNextPage' | 'fetchNextPage'> }) {
  if (!query.hasNextPage) return null;
  return (
    <div className="load-more">
      <button type="button" className="button" onClick={() => void query.fetchNextPage()} disabled={query.isFetchingNextPage}>
        {query.isFetchingNextPage ? 'Loading…' : 'Load more'}
      </button>
    </div>
  );
}
