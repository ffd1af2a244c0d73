import { useQuery } from '@tanstack/react-query';
import { api } from '../api/client';
import type { Repository, RepositoryFiles } from '../api/repository-types';
import type { Page } from '../api/types';

/** The tenant's repositories (the first 1000); `enabled` false asks nothing. */
export function useRepositories(enabled = true) {
  return useQuery({
    queryKey: ['repositories', 'list'],
    queryFn: ({ signal }) => api<Page<Repository>>('/repositories', { query: { limit: 1000 }, signal }),
    enabled,
  });
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
