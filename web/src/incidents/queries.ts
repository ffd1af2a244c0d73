import { keepPreviousData, useMutation, useQuery, useQueryClient } from '@tanstack/react-query';
import { api } from '../api/client';
import type { Analytics, AnalyticsFilters, Candidates, Incident, IncidentDetail, IncidentState, TroubleshootReply } from '../api/incident-types';
import { useLivePages } from '../api/useLivePages';
import type { RunReply } from '../rules/run-now';

/** Open incidents arrive and close while you look: the list and a page refresh on their own. */
const LIVE_MS = 2000;

export function useIncidents(state: IncidentState, pageSize = 50) {
  return useLivePages<Incident>(['incidents', 'list', state, pageSize], '/incidents', { state }, { pageSize, refetchMs: LIVE_MS, keepPrevious: true });
}

export function incidentKey(id: string) {
  return ['incidents', 'one', id];
}

export function useIncident(id: string) {
  return useQuery({ queryKey: incidentKey(id), queryFn: ({ signal }) => api<IncidentDetail>(`/incidents/${id}`, { signal }), refetchInterval: LIVE_MS });
}

/** The analytics of a period (GET /incidents/analytics): the numbers the charts draw, as the API gives them. */
export function useAnalytics(filters: AnalyticsFilters) {
  return useQuery({
    queryKey: ['incidents', 'analytics', filters],
    queryFn: ({ signal }) => api<Analytics>('/incidents/analytics', { query: { ...filters }, signal }),
    placeholderData: keepPreviousData,
    refetchInterval: 30_000,
  });
}

export function useCandidates(filters: AnalyticsFilters, options: { minCount?: number; minMeanSeconds?: number } = {}, enabled = true) {
  return useQuery({
    queryKey: ['incidents', 'candidates', filters, options],
    queryFn: ({ signal }) => api<Candidates>('/incidents/candidates', { query: { ...filters, ...options }, signal }),
    placeholderData: keepPreviousData,
    refetchInterval: 30_000,
    enabled,
  });
}

/** What Troubleshoot now runs: a stored runbook (its latest version) or a starter runbook. */
export type RunbookChoice = { runbookId: string } | { starter: string };

export function useTroubleshoot(incidentId: string) {
  const queryClient = useQueryClient();
  return useMutation({
    mutationFn: (body: RunbookChoice & { hostname?: string }) => api<TroubleshootReply>(`/incidents/${incidentId}/troubleshoot`, { method: 'POST', body }),
    onSuccess: () => queryClient.invalidateQueries({ queryKey: ['incidents'] }),
  });
}

export function useFixNow(incidentId: string) {
  const queryClient = useQueryClient();
  return useMutation({
    mutationFn: (body: { ruleId: string; act?: boolean }) => api<RunReply>(`/incidents/${incidentId}/fix`, { method: 'POST', body }),
    onSuccess: () => queryClient.invalidateQueries({ queryKey: ['incidents'] }),
  });
}

export function useResolveIncident() {
  const queryClient = useQueryClient();
  return useMutation({
    mutationFn: (id: string) => api<Incident>(`/incidents/${id}/resolve`, { method: 'POST' }),
    onSuccess: () => queryClient.invalidateQueries({ queryKey: ['incidents'] }),
  });
}

