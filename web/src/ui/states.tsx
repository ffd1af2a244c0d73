import type { UseQueryResult } from '@tanstack/react-query';
import type { ReactNode } from 'react';
import { messageOf } from '../api/problem';

export function Loading({ what }: { what: string }) {
  return (
    <div className="state state-loading" role="status" aria-live="polite">
      <span className="spinner" aria-hidden="true" /> Loading {what}…
    </div>
  );
}

export function ErrorBanner({ error, onRetry, what }: { error: unknown; onRetry?: () => void; what?: string }) {
  return (
    <div className="banner banner-error" role="alert">
      <div>
        {what ? <strong>Could not load {what}. </strong> : null}
        {messageOf(error)}
      </div>
      {onRetry ? (
        <button type="button" className="button button-small" onClick={onRetry}>
          Retry
        </button>
      ) : null}
    </div>
  );
}

export function EmptyState({ title, children }: { title: string; children?: ReactNode }) {
  return (
    <div className="state state-empty">
      <h3>{title}</h3>
      {children}
    </div>
  );
}

/** The empty state of a filtered list: `what` is singular ("rule"). */
export function NoMatch({ what, onClear }: { what: string; onClear: () => void }) {
  return (
    <EmptyState title={`No ${what} matches these filters`}>
      <button type="button" className="button" onClick={onClear}>
        Clear filters
      </button>
    </EmptyState>
  );
}

interface LoadableProps<T> {
  query: UseQueryResult<T>;
  /** Plural noun for messages: "rules", "hosts". */
  what: string;
  isEmpty?: (data: T) => boolean;
  empty?: ReactNode;
  children: (data: T) => ReactNode;
}

/** Every data view has the same three other states: loading, failed (with retry), and empty. */
export function Loadable<T>({ query, what, isEmpty, empty, children }: LoadableProps<T>) {
  if (query.isPending) return <Loading what={what} />;
  if (query.isError) return <ErrorBanner error={query.error} what={what} onRetry={() => void query.refetch()} />;
  if (isEmpty?.(query.data)) return <>{empty}</>;
  return <>{children(query.data)}</>;
}

/** A form's problem that no field holds: the service's refusal, said in a banner. */
export function FormBanner({ banner }: { banner: string | null | undefined }) {
  if (!banner) return null;
  return (
    <p className="banner banner-error" role="alert">
      <span>{banner}</span>
    </p>
  );
}

/** What became of a form's save: its problem, or `saved` once it succeeded. Announced politely. */
export function SaveOutcome({ mutation, saved }: { mutation: { isError: boolean; isSuccess: boolean; error: unknown }; saved: ReactNode }) {
  return (
    <div aria-live="polite">
      {mutation.isError ? (
        <p className="banner banner-error" role="alert">
          <span>{messageOf(mutation.error)}</span>
        </p>
      ) : null}
      {mutation.isSuccess ? (
        <p className="banner banner-info" role="status">
          <span>{saved}</span>
        </p>
      ) : null}
    </div>
  );
}
