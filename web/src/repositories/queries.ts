import { useMutation, useQuery, useQueryClient } from '@tanstack/react-query';
import { api } from '../api/client';
import type { Repository, RepositoryFiles, RepositoryInput, RepositoryPatch, RepositoryTest } from '../api/repository-types';
import type { Page, Rule } from '../api/types';

/** The tenant's repositories (the first 1000); `enabled` false asks nothing. */
export function useRepositories(enabled = true) {
  return useQuery({
    queryKey: ['repositories', 'list'],
    queryFn: ({ signal }) => api<Page<Repository>>('/repositories', { query: { limit: 1000 }, signal }),
    enabled,
  });
}

export function useRepository(id: string) {
  return useQuery({ queryKey: ['repositories', 'one', id], queryFn: ({ signal }) => api<Repository>(`/repositories/${id}`, { signal }) });
}

/** The files of the repository at `ref` (its own when empty), for picking a runbook's path; asked only once a repository is chosen. */
export function useRepositoryFiles(id: string, ref: string) {
  return useQuery({
    queryKey: ['repositories', 'files', id, ref],
    queryFn: ({ signal }) => api<RepositoryFiles>(`/repositories/${id}/files`, { query: { ref }, signal }),
    enabled: id !== '',
    staleTime: 60_000,
    retry: false,
  });
}

// A token or a deploy key rides in these mutations' variables: gcTime 0 drops the mutation from the
// cache as soon as no form watches it, so the secret does not linger in memory after the form is gone.
const FORGET_AT_ONCE = { gcTime: 0 };

export function useCreateRepository() {
  const queryClient = useQueryClient();
  return useMutation({
    ...FORGET_AT_ONCE,
    mutationFn: (input: RepositoryInput) => api<Repository>('/repositories', { method: 'POST', body: input }),
    onSuccess: () => queryClient.invalidateQueries({ queryKey: ['repositories', 'list'] }),
  });
}

export function useUpdateRepository(id: string) {
  const queryClient = useQueryClient();
  return useMutation({
    ...FORGET_AT_ONCE,
    mutationFn: (patch: RepositoryPatch) => api<Repository>(`/repositories/${id}`, { method: 'PATCH', body: patch }),
    onSuccess: (repository) => {
      queryClient.setQueryData(['repositories', 'one', id], repository);
      return queryClient.invalidateQueries({ queryKey: ['repositories'] });
    },
  });
}

export function useDeleteRepository() {
  const queryClient = useQueryClient();
  return useMutation({
    mutationFn: (id: string) => api<void>(`/repositories/${id}`, { method: 'DELETE' }),
    onSuccess: (_nothing, id) => {
      queryClient.removeQueries({ queryKey: ['repositories', 'one', id] });
      return queryClient.invalidateQueries({ queryKey: ['repositories', 'list'] });
    },
  });
}

/** Test connection: where the server says the ref is. Its last test is recorded either way, so the views refresh after. */
export function useTestRepository(id: string) {
  const queryClient = useQueryClient();
  return useMutation({
    mutationFn: () => api<RepositoryTest>(`/repositories/${id}/test`, { method: 'POST' }),
    onSettled: () => queryClient.invalidateQueries({ queryKey: ['repositories'] }),
  });
}

/** The tenant's rules that read their runbook from the repository (the service refuses to delete it while there are any). */
export function useRulesReading(repositoryId: string) {
  return useQuery({
    queryKey: ['rules', 'using-repository', repositoryId],
    queryFn: async ({ signal }) =>
      (await api<Page<Rule>>('/rules', { query: { limit: 1000 }, signal })).items.filter(
        (rule) => (rule.action.type === 'script' || rule.action.type === 'cli') && 'repositoryId' in rule.action.runbook && rule.action.runbook.repositoryId === repositoryId,
      ),
  });
}
