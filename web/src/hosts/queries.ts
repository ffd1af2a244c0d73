import { keepPreviousData, useMutation, useQuery, useQueryClient } from '@tanstack/react-query';
import { api } from '../api/client';
import type { AgentInstall, Host, HostCount, HostEnrolment, Page } from '../api/types';
import { byHostname } from './sort';

export function useHosts(options: { tags?: string[]; limit?: number; live?: boolean; enabled?: boolean } = {}) {
  const { tags = [], limit = 1000, live = false, enabled = true } = options;
  return useQuery({
    enabled,
    queryKey: ['hosts', 'list', tags, limit],
    queryFn: ({ signal }) => api<Page<Host>>('/hosts', { query: { tag: tags, limit }, signal }),
    // The API lists hosts as they enrolled; people look for them by name.
    select: sortedByName,
    // Agents come and go: the hosts page shows a new host within seconds of its agent starting.
    refetchInterval: live ? 3000 : false,
    placeholderData: keepPreviousData,
  });
}

function sortedByName(page: Page<Host>): Page<Host> {
  return { ...page, items: byHostname(page.items) };
}

export function useHostTags() {
  return useQuery({ queryKey: ['hosts', 'tags'], queryFn: ({ signal }) => api<{ items: Array<{ tag: string; hosts: number }> }>('/hosts/tags', { signal }) });
}

/** How many hosts carry every one of `tags`: the hosts a specific_tags target would run on. */
export function useHostCount(tags: string[]) {
  return useQuery({
    queryKey: ['hosts', 'count', tags],
    queryFn: ({ signal }) => api<HostCount>('/hosts/count', { query: { tag: tags }, signal }),
    enabled: tags.length > 0,
    placeholderData: keepPreviousData,
  });
}

export function useAgentInstall() {
  return useQuery({ queryKey: ['agents', 'install'], queryFn: ({ signal }) => api<AgentInstall>('/agents/install', { signal }), staleTime: 60_000 });
}

export function useSetHostTags() {
  const queryClient = useQueryClient();
  return useMutation({
    mutationFn: ({ id, tags }: { id: string; tags: string[] }) => api<Host>(`/hosts/${id}`, { method: 'PATCH', body: { tags } }),
    onSuccess: () => queryClient.invalidateQueries({ queryKey: ['hosts'] }),
  });
}

export function useForgetHost() {
  const queryClient = useQueryClient();
  return useMutation({
    mutationFn: (id: string) => api<void>(`/hosts/${id}`, { method: 'DELETE' }),
    onSuccess: () => queryClient.invalidateQueries({ queryKey: ['hosts'] }),
  });
}

/** Every agent that took the host's name: who (the key), when, from where. */
export function useHostHistory(hostId: string, enabled: boolean) {
  return useQuery({
    enabled,
    queryKey: ['hosts', 'history', hostId],
    queryFn: ({ signal }) => api<Page<HostEnrolment>>(`/hosts/${hostId}/history`, { query: { limit: 1000 }, signal }),
  });
}
