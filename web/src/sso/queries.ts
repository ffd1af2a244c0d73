import { useMutation, useQuery, useQueryClient } from '@tanstack/react-query';
import { api, ApiProblem } from '../api/client';
import type { Role } from '../auth/roles';

/** How a signed-in identity gets its role: by e-mail domain (public OIDC), group claim (enterprise OIDC) or attribute (SAML). */
export type RoleMapping =
  | { domains: Record<string, Role> }
  | { claim: string; groups: Record<string, Role>; default?: Role }
  | { attribute: string; values: Record<string, Role>; default?: Role };

export interface SsoProvider {
  id: string;
  type: 'oidc' | 'saml';
  name: string;
  issuer?: string;
  clientId?: string;
  clientSecretSet?: boolean;
  scopes?: string[];
  metadataXml?: string;
  roleMapping: RoleMapping;
  jit: boolean;
  required: boolean;
  startUrl: string;
  callbackUrl?: string;
  metadataUrl?: string;
}

export interface SsoProviderInput {
  type: 'oidc' | 'saml';
  name: string;
  issuer?: string;
  clientId?: string;
  /** Write-only: sent when typed, never read back. */
  clientSecret?: string;
  scopes?: string[];
  metadataXml?: string;
  roleMapping: RoleMapping;
  jit: boolean;
  required: boolean;
}

const KEY = ['sso-providers'];

/** The tenant's providers; a service without single sign-on (404) has none. */
export function useSsoProviders() {
  return useQuery({
    queryKey: KEY,
    queryFn: async ({ signal }) => {
      try {
        const answer = await api<{ items: SsoProvider[] } | SsoProvider[]>('/sso-providers', { signal });
        return { available: true, items: Array.isArray(answer) ? answer : answer.items };
      } catch (problem) {
        if (problem instanceof ApiProblem && problem.status === 404) return { available: false, items: [] as SsoProvider[] };
        throw problem;
      }
    },
  });
}

export function useSaveSsoProvider() {
  const queryClient = useQueryClient();
  return useMutation({
    mutationFn: ({ id, input }: { id: string | null; input: SsoProviderInput }) => {
      if (id === null) return api<SsoProvider>('/sso-providers', { method: 'POST', body: input });
      const { type: _type, ...patch } = input;
      return api<SsoProvider>(`/sso-providers/${id}`, { method: 'PATCH', body: patch });
    },
    onSuccess: () => queryClient.invalidateQueries({ queryKey: KEY }),
  });
}

export function useDeleteSsoProvider() {
  const queryClient = useQueryClient();
  return useMutation({
    mutationFn: (id: string) => api<void>(`/sso-providers/${id}`, { method: 'DELETE' }),
    onSuccess: () => queryClient.invalidateQueries({ queryKey: KEY }),
  });
}
