import { useInfiniteQuery, useMutation, useQuery, useQueryClient } from '@tanstack/react-query';
import { api } from '../api/client';
import type { LibraryItem, RunbookDiff, RunbookInput, RunbookSaved, RunbookSummary, RunbookVersionSummary, RunbookVersionView, RunbookView } from '../api/runbook-types';
import type { Page, Rule } from '../api/types';
import { useLivePages } from '../api/useLivePages';

// Runbooks change when people save them, not on their own: the list looks again now and then only.
const LIST_REFRESH_MS = 30_000;

export function useRunbooks(search: string | undefined) {
  return useLivePages<RunbookSummary>(['runbooks', 'list', search], '/runbooks', { search }, { pageSize: 50, refetchMs: LIST_REFRESH_MS, keepPrevious: true });
}

export function useRunbook(id: string) {
  return useQuery({ queryKey: ['runbooks', 'one', id], queryFn: ({ signal }) => api<RunbookView>(`/runbooks/${id}`, { signal }) });
}

/** Newest first, 50 at a time. */
export function useRunbookVersions(id: string) {
  return useInfiniteQuery({
    queryKey: ['runbooks', 'versions', id],
    queryFn: ({ pageParam, signal }) => api<Page<RunbookVersionSummary>>(`/runbooks/${id}/versions`, { query: { cursor: pageParam, limit: 50 }, signal }),
    initialPageParam: undefined as string | undefined,
    getNextPageParam: (page) => page.nextCursor ?? undefined,
  });
}

/** A version never changes once saved: it is asked once. */
export function useRunbookVersion(id: string, version: number) {
  return useQuery({
    queryKey: ['runbooks', 'version', id, version],
    queryFn: ({ signal }) => api<RunbookVersionView>(`/runbooks/${id}/versions/${version}`, { signal }),
    staleTime: Infinity,
  });
}

/** What changed from one version to another; both are immutable, so the answer is too. */
export function useRunbookDiff(id: string, from: number, to: number) {
  return useQuery({
    queryKey: ['runbooks', 'diff', id, from, to],
    queryFn: ({ signal }) => api<RunbookDiff>(`/runbooks/${id}/diff`, { query: { from, to }, signal }),
    staleTime: Infinity,
  });
}

function useSave<Variables>(mutationFn: (variables: Variables) => Promise<RunbookSaved>) {
  const queryClient = useQueryClient();
  return useMutation({
    mutationFn,
    onSuccess: (saved) => {
      const { versionCreated: _created, ...view } = saved;
      queryClient.setQueryData(['runbooks', 'one', saved.id], view);
      return Promise.all([queryClient.invalidateQueries({ queryKey: ['runbooks', 'list'] }), queryClient.invalidateQueries({ queryKey: ['runbooks', 'versions', saved.id] })]);
    },
  });
}

export function useCreateRunbook() {
  return useSave((input: RunbookInput) => api<RunbookSaved>('/runbooks', { method: 'POST', body: input }));
}

/** PUT: the whole next version; a body equal to the latest saves nothing (versionCreated false). */
export function useSaveRunbook(id: string) {
  return useSave((input: RunbookInput) => api<RunbookSaved>(`/runbooks/${id}`, { method: 'PUT', body: input }));
}

export function useDeleteRunbook() {
  const queryClient = useQueryClient();
  return useMutation({
    mutationFn: (id: string) => api<void>(`/runbooks/${id}`, { method: 'DELETE' }),
    onSuccess: (_nothing, id) => {
      queryClient.removeQueries({ queryKey: ['runbooks', 'one', id] });
      return queryClient.invalidateQueries({ queryKey: ['runbooks', 'list'] });
    },
  });
}

/** Every runbook of the tenant by name (the first 1000), for pickers; `enabled` false asks nothing. */
export function useRunbookChoices(enabled = true) {
  return useQuery({
    queryKey: ['runbooks', 'list', 'choices'],
    queryFn: async ({ signal }) => (await api<Page<RunbookSummary>>('/runbooks', { query: { limit: 1000 }, signal })).items.sort((a, b) => a.name.localeCompare(b.name)),
    enabled,
  });
}

/** The tenant's rules that run the runbook (the service refuses to delete it while there are any). */
export function useRulesUsingRunbook(runbookId: string) {
  return useQuery({
    queryKey: ['rules', 'using-runbook', runbookId],
    queryFn: async ({ signal }) =>
      (await api<Page<Rule>>('/rules', { query: { limit: 1000 }, signal })).items.filter(
        (rule) => 'runbook' in rule.action && 'runbookId' in rule.action.runbook && rule.action.runbook.runbookId === runbookId,
      ),
  });
}

/** The starter runbooks shipped with pitcrew: they change only with pitcrew itself. */
export function useRunbookLibrary() {
  return useQuery({
    queryKey: ['runbook-library'],
    queryFn: ({ signal }) => api<{ items: LibraryItem[] }>('/runbook-library', { signal }),
    staleTime: Infinity,
  });
}

/** A copy of a starter runbook in the tenant's store, as its version 1. */
export function useInstallRunbook() {
  return useSave(({ slug, name }: { slug: string; name: string }) => api<RunbookSaved>(`/runbook-library/${slug}/install`, { method: 'POST', body: { name } }));
}
