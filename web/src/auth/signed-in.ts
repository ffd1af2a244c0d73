import type { QueryClient } from '@tanstack/react-query';
import { ME_KEY, type Me } from './me';
import { cookieSessionStarted } from './session';

/** The service answered a sign-in (password, invitation) with the session cookie and who we are. */
export function keepCookieSession(queryClient: QueryClient, me: Me): void {
  queryClient.clear();
  queryClient.setQueryData(ME_KEY, me);
  rememberTenant(me);
  cookieSessionStarted(me.csrfToken);
}

const TENANT_KEY = 'pitcrew.tenant';

/** The tenant signed in to last, so the sign-in page can show its single sign-on buttons next time. */
export function rememberTenant(me: Me): void {
  const tenant = me.tenants.find((one) => one.id === me.tenantId);
  if (tenant) localStorage.setItem(TENANT_KEY, tenant.name);
}

export function rememberedTenant(): string | null {
  return localStorage.getItem(TENANT_KEY);
}
