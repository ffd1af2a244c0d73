import type { ReactNode } from 'react';
import { Navigate, useLocation } from 'react-router';
import { Loading } from '../ui/states';
import { useSession } from './useSession';

/** Pages of the app need a session; without one, sign in first and come back here. */
export function RequireAuth({ children }: { children: ReactNode }) {
  const session = useSession();
  const location = useLocation();
  if (session === 'unknown') return <Loading what="your session" />;
  if (!session) return <Navigate to="/sign-in" replace state={{ from: `${location.pathname}${location.search}` }} />;
  return <>{children}</>;
}
