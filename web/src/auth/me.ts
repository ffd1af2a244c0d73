import { useQuery } from '@tanstack/react-query';
import { api } from '../api/client';
import type { Role } from './roles';

/** GET /api/v1/me: who is signed in, in which tenant, with which role. */
export interface Me {
  user: { id: string; email: string | null; totp: boolean };
  tenants: { id: string; name: string; role: Role }[];
  tenantId: string;
  role: Role;
  via: string;
  csrfToken: string | null;
}

export const ME_KEY = ['me'] as const;

export function useMe() {
  return useQuery({ queryKey: ME_KEY, queryFn: ({ signal }) => api<Me>('/me', { signal }), staleTime: 60_000 });
}
