import type { ReactNode } from 'react';
import { Time } from './Time';

/** Whether an issued secret (an API key, a token) still works: "active", or since when it is revoked; `children` adds to the latter. */
export function RevokedOrActive({ revokedAt, children }: { revokedAt: string | null; children?: ReactNode }) {
  if (!revokedAt) return <>active</>;
  return (
    <span className="muted">
      revoked <Time iso={revokedAt} />
      {children}
    </span>
  );
}
