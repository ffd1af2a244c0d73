import { useMutation, useQuery, useQueryClient } from '@tanstack/react-query';
import { api } from '../api/client';
import type { ApiKey, ApiKeyScope, IssuedApiKey, Page } from '../api/types';

export function useApiKeys() {
  return useQuery({ queryKey: ['api-keys'], queryFn: ({ signal }) => api<Page<ApiKey>>('/api-keys', { query: { limit: 1000 }, signal }) });
}

export function useIssueApiKey() {
  const queryClient = useQueryClient();
  return useMutation({
    mutationFn: (key: { name: string; scopes: ApiKeyScope[] }) => api<IssuedApiKey>('/api-keys', { method: 'POST', body: key }),
    onSuccess: () => queryClient.invalidateQueries({ queryKey: ['api-keys'] }),
  });
}

export function useNarrowApiKey() {
  const queryClient = useQueryClient();
  return useMutation({
    mutationFn: ({ id, scopes }: { id: string; scopes: ApiKeyScope[] }) => api<ApiKey>(`/api-keys/${id}`, { method: 'PATCH', body: { scopes } }),
    onSuccess: () => queryClient.invalidateQueries({ queryKey: ['api-keys'] }),
  });
}

export function useRevokeApiKey() {
  const queryClient = useQueryClient();
  return useMutation({
    mutationFn: (id: string) => api<IssuedApiKey>(`/api-keys/${id}/revoke`, { method: 'POST' }),
    onSuccess: () => queryClient.invalidateQueries({ queryKey: ['api-keys'] }),
  });
}
