import { useMutation, useQuery, useQueryClient } from '@tanstack/react-query';
import { api } from '../api/client';
import type { Credential, CredentialInput, CredentialPatch, CredentialTest } from '../api/credential-types';
import type { Page, Rule } from '../api/types';

export function useCredentials() {
  return useQuery({
    queryKey: ['credentials', 'list'],
    queryFn: ({ signal }) => api<Page<Credential>>('/credentials', { query: { limit: 1000 }, signal }),
  });
}

export function useCredential(id: string) {
  return useQuery({ queryKey: ['credentials', 'one', id], queryFn: ({ signal }) => api<Credential>(`/credentials/${id}`, { signal }) });
}

// A secret rides in these mutations' variables: gcTime 0 drops the mutation from the cache as soon
// as no form watches it, so the secret does not linger in memory after the form is gone.
const FORGET_AT_ONCE = { gcTime: 0 };

export function useCreateCredential() {
  const queryClient = useQueryClient();
  return useMutation({
    ...FORGET_AT_ONCE,
    mutationFn: (input: CredentialInput) => api<Credential>('/credentials', { method: 'POST', body: input }),
    onSuccess: () => queryClient.invalidateQueries({ queryKey: ['credentials'] }),
  });
}

export function useUpdateCredential(id: string) {
  const queryClient = useQueryClient();
  return useMutation({
    ...FORGET_AT_ONCE,
    mutationFn: (patch: CredentialPatch) => api<Credential>(`/credentials/${id}`, { method: 'PATCH', body: patch }),
    onSuccess: (credential) => {
      queryClient.setQueryData(['credentials', 'one', id], credential);
      return queryClient.invalidateQueries({ queryKey: ['credentials'] });
    },
  });
}

export function useDeleteCredential() {
  const queryClient = useQueryClient();
  return useMutation({
    mutationFn: (id: string) => api<void>(`/credentials/${id}`, { method: 'DELETE' }),
    onSuccess: (_nothing, id) => {
      queryClient.removeQueries({ queryKey: ['credentials', 'one', id] });
      return queryClient.invalidateQueries({ queryKey: ['credentials', 'list'] });
    },
  });
}

/** One harmless read at the provider; its last test is recorded either way, so the views refresh after. */
export function useTestCredential(id: string) {
  const queryClient = useQueryClient();
  return useMutation({
    mutationFn: () => api<CredentialTest>(`/credentials/${id}/test`, { method: 'POST' }),
    onSettled: () => queryClient.invalidateQueries({ queryKey: ['credentials'] }),
  });
}

/** The tenant's rules whose cloud action acts with the credential (the service refuses to delete it while there are any). */
export function useRulesUsing(credentialId: string) {
  return useQuery({
    queryKey: ['rules', 'using-credential', credentialId],
    queryFn: async ({ signal }) => (await api<Page<Rule>>('/rules', { query: { limit: 1000 }, signal })).items.filter((rule) => rule.action.type === 'cloud' && rule.action.credentialId === credentialId),
  });
}
