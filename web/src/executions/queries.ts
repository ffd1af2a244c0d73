import { useMutation, useQuery, useQueryClient } from '@tanstack/react-query';
import { api } from '../api/client';
import type { Execution, ExecutionState } from '../api/types';
import { useLivePages } from '../api/useLivePages';
import { isActive } from './states';

export interface ExecutionFilters {
  ruleId?: string;
  eventId?: string;
  hostname?: string;
  state?: ExecutionState;
}

export function useExecutions(filters: ExecutionFilters, pageSize = 50) {
  return useLivePages<Execution>(['executions', 'list', filters, pageSize], '/executions', { ...filters }, { pageSize, refetchMs: 3000, keepPrevious: true });
}

export function executionKey(id: string) {
  return ['executions', 'one', id];
}

export function useExecution(id: string) {
  return useQuery({
    queryKey: executionKey(id),
    queryFn: ({ signal }) => api<Execution>(`/executions/${id}`, { signal }),
    // The live stream brings changes while it runs; this catches what a dropped stream missed.
    refetchInterval: (query) => (query.state.data && isActive(query.state.data.state) ? 5000 : false),
  });
}

export function useCancelExecution() {
  const queryClient = useQueryClient();
  return useMutation({
    mutationFn: (id: string) => api<Execution>(`/executions/${id}/cancel`, { method: 'POST' }),
    onSuccess: (execution) => {
      queryClient.setQueryData(executionKey(execution.id), (old: Execution | undefined) => ({ ...old, ...execution }));
      return queryClient.invalidateQueries({ queryKey: ['executions', 'list'] });
    },
  });
}

/** An approval e-mail's signed link: `exp` and `sig` of its query. */
export interface ApprovalLink {
  exp: string;
  sig: string;
}

/** The execution an approval e-mail's link names, read (never decided) once the link is checked. */
export function useLinkedExecution(id: string, link: ApprovalLink) {
  return useQuery({
    queryKey: [...executionKey(id), 'link', link],
    queryFn: ({ signal }) => api<Execution>(`/executions/${id}/approval-link`, { signal, query: { ...link } }),
    retry: false,
  });
}

/**
 * Approve or reject an execution awaiting approval (docs/approvals.md), with an optional comment;
 * with the e-mail's link when the page was opened from it.
 */
export function useDecideExecution() {
  const queryClient = useQueryClient();
  return useMutation({
    mutationFn: ({ id, verdict, comment, link }: { id: string; verdict: 'approve' | 'reject'; comment: string; link?: ApprovalLink }) =>
      api<Execution>(`/executions/${id}/${verdict}`, { method: 'POST', body: { ...(comment.trim() ? { comment: comment.trim() } : {}), ...(link ? { link } : {}) } }),
    onSuccess: (execution) => {
      queryClient.setQueryData(executionKey(execution.id), (old: Execution | undefined) => ({ ...old, ...execution }));
      void queryClient.invalidateQueries({ queryKey: [...executionKey(execution.id), 'link'] });
      return queryClient.invalidateQueries({ queryKey: ['executions', 'list'] });
    },
  });
}
