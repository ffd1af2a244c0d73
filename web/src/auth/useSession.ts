import { useQueryClient } from '@tanstack/react-query';
import { useEffect, useSyncExternalStore } from 'react';
import { api } from '../api/client';
import { messageOf } from '../api/problem';
import { ME_KEY, type Me } from './me';
import { cookieSessionStarted, sessionKind, signOut, subscribeToSession } from './session';
import { rememberTenant } from './signed-in';

let checking: Promise<void> | null = null;

/**
 * How this tab is signed in. A session cookie that may still be good (this browser signed in
 * before) is checked once with GET /me, which also gives back the CSRF token: until then, 'unknown'.
 */
export function useSession() {
  const kind = useSyncExternalStore(subscribeToSession, sessionKind);
  const queryClient = useQueryClient();
  useEffect(() => {
    if (kind !== 'unknown' || checking) return;
    checking = api<Me>('/me', { checkingSession: true })
      .then((me) => {
        queryClient.setQueryData(ME_KEY, me);
        // After a single sign-on this is the first the page hears of the tenant.
        rememberTenant(me);
        cookieSessionStarted(me.csrfToken);
      })
      .catch((problem: unknown) => signOut(messageOf(problem)))
      .finally(() => (checking = null));
  }, [kind, queryClient]);
  return kind;
}
