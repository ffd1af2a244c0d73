import type { ReactNode } from 'react';
import { Navigate, useLocation } from 'react-router';
import { useToken } from './useToken';

/** Pages of the app need a session; without one, sign in first and come back here. */
export function RequireAuth({ children }: { children: ReactNode }) {
  const token = useToken();
  const location = useLocation();
  if (!token) return <Navigate to="/sign-in" replace state={{ from: `${location.pathname}${location.search}` }} />;
  return <>{children}</>;
}
