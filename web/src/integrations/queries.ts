import { keepPreviousData, useInfiniteQuery, useMutation, useQuery, useQueryClient } from '@tanstack/react-query';
import { api } from '../api/client';
import type {
  ImportPatch, ImportRun, Integration, IntegrationInput, KeystoneLogin, LoggedAlert, MonascaCoverage, TestAlertInput, TestAlertResult, PreviewDraft, TriggerMatch, TriggerPreview,
} from '../api/integration-types';
import type { Page } from '../api/types';

// Alerts arrive while you look: the status and the log refresh on their own.
const LIVE_MS = 5000;

export function useIntegrations() {
  return useQuery({
    queryKey: ['integrations', 'list'],
    queryFn: ({ signal }) => api<Page<Integration>>('/integrations', { query: { limit: 1000 }, signal }),
    refetchInterval: LIVE_MS,
  });
}

export function useIntegration(id: string) {
  return useQuery({ queryKey: ['integrations', 'one', id], queryFn: ({ signal }) => api<Integration>(`/integrations/${id}`, { signal }), refetchInterval: LIVE_MS });
}

export function useIntegrationAlerts(id: string) {
  return useInfiniteQuery({
    queryKey: ['integrations', 'alerts', id],
    queryFn: ({ pageParam, signal }) => api<Page<LoggedAlert>>(`/integrations/${id}/alerts`, { query: { cursor: pageParam, limit: 25 }, signal }),
    initialPageParam: undefined as string | undefined,
    getNextPageParam: (page) => page.nextCursor ?? undefined,
    refetchInterval: LIVE_MS,
  });
}

export function useCreateIntegration() {
  const queryClient = useQueryClient();
  return useMutation({
    mutationFn: (input: IntegrationInput) => api<Integration>('/integrations', { method: 'POST', body: input }),
    onSuccess: () => queryClient.invalidateQueries({ queryKey: ['integrations'] }),
  });
}

export function useUpdateIntegration(id: string) {
  const queryClient = useQueryClient();
  return useMutation({
    mutationFn: (patch: Partial<Pick<IntegrationInput, 'name' | 'config' | 'secret'>> & { graphSecret?: IntegrationInput['graphSecret'] | null }) => api<Integration>(`/integrations/${id}`, { method: 'PATCH', body: patch }),
    onSuccess: (integration) => {
      queryClient.setQueryData(['integrations', 'one', id], integration);
      return queryClient.invalidateQueries({ queryKey: ['integrations'] });
    },
  });
}

export function useDeleteIntegration() {
  const queryClient = useQueryClient();
  return useMutation({
    mutationFn: (id: string) => api<void>(`/integrations/${id}`, { method: 'DELETE' }),
    onSuccess: (_nothing, id) => {
      queryClient.removeQueries({ queryKey: ['integrations', 'one', id] });
      return queryClient.invalidateQueries({ queryKey: ['integrations'] });
    },
  });
}

export function useSendTestAlert(id: string) {
  const queryClient = useQueryClient();
  return useMutation({
    mutationFn: (input: TestAlertInput) => api<TestAlertResult>(`/integrations/${id}/test`, { method: 'POST', body: input }),
    onSettled: () => queryClient.invalidateQueries({ queryKey: ['integrations'] }),
  });
}

/** Which recent alerts a trigger would have matched; kept on screen while the next answer comes. */
export function useTriggerPreview(id: string | undefined, match: TriggerMatch & PreviewDraft) {
  return useQuery({
    queryKey: ['integrations', 'preview', id, match],
    queryFn: ({ signal }) => api<TriggerPreview>(`/integrations/${id}/alerts/preview`, { method: 'POST', body: match, query: { limit: 50 }, signal }),
    enabled: id !== undefined,
    placeholderData: keepPreviousData,
  });
}

export function useMonascaToken(id: string) {
  const queryClient = useQueryClient();
  return useMutation({
    mutationFn: (login: KeystoneLogin) => api<{ expiresAt: string | null }>(`/integrations/${id}/monasca/token`, { method: 'POST', body: login }),
    onSuccess: () => queryClient.invalidateQueries({ queryKey: ['integrations'] }),
  });
}

export function useMonascaCoverage(id: string, enabled: boolean) {
  return useQuery({
    queryKey: ['integrations', 'monasca', id],
    queryFn: ({ signal }) => api<MonascaCoverage>(`/integrations/${id}/monasca/alarm-definitions`, { signal }),
    enabled,
    retry: false,
  });
}

/** The import settings, PATCH /integrations/{id} {import} (an admin's). */
export function useUpdateImport(id: string) {
  const queryClient = useQueryClient();
  return useMutation({
    mutationFn: (patch: ImportPatch) => api<Integration>(`/integrations/${id}`, { method: 'PATCH', body: { import: patch } }),
    onSuccess: (integration) => {
      queryClient.setQueryData(['integrations', 'one', id], integration);
      return queryClient.invalidateQueries({ queryKey: ['integrations'] });
    },
  });
}

/** Import now (an operator's): 202 {importId}. */
export function useImportNow(id: string) {
  const queryClient = useQueryClient();
  return useMutation({
    mutationFn: () => api<{ importId: string; created: boolean }>(`/integrations/${id}/import`, { method: 'POST' }),
    onSettled: () => queryClient.invalidateQueries({ queryKey: ['integrations', 'imports', id] }),
  });
}

/** The recent imports, refreshed every second while one is queued or running, else with the page. */
export function useImports(id: string) {
  return useQuery({
    queryKey: ['integrations', 'imports', id],
    queryFn: ({ signal }) => api<Page<ImportRun>>(`/integrations/${id}/imports`, { query: { limit: 10 }, signal }),
    refetchInterval: (query) => (query.state.data?.items.some((run) => run.state === 'queued' || run.state === 'running') ? 1000 : LIVE_MS),
  });
}
