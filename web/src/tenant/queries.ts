import { useMutation, useQuery, useQueryClient } from '@tanstack/react-query';
import { api } from '../api/client';
import type { Tenant, TenantPatch } from '../api/types';

export function useTenant() {
  return useQuery({ queryKey: ['tenant'], queryFn: ({ signal }) => api<Tenant>('/tenant', { signal }), staleTime: 60_000 });
}

export function useUpdateTenant() {
  const queryClient = useQueryClient();
  return useMutation({
    mutationFn: (patch: TenantPatch) => api<Tenant>('/tenant', { method: 'PATCH', body: patch }),
    onSuccess: (tenant) => queryClient.setQueryData(['tenant'], tenant),
  });
}
