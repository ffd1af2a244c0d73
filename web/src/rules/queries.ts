import { keepPreviousData, useMutation, useQuery, useQueryClient } from '@tanstack/react-query';
import { api } from '../api/client';
import { ApiProblem } from '../api/problem';
import type { LimitUsage, Outcome, Page, Rule, RuleEvent, RuleInput, SchedulePreview, SchedulePreviewInput, TriggerType } from '../api/types';
import { useLivePages } from '../api/useLivePages';

export interface RuleFilters {
  search?: string;
  enabled?: boolean;
  triggerType?: TriggerType;
}

// Lists refresh on their own: the last event and execution of each rule change while you look.
const LIVE_MS = 4000;

export function useRules(filters: RuleFilters) {
  return useLivePages<Rule>(['rules', 'list', filters], '/rules', { ...filters }, { pageSize: 100, refetchMs: LIVE_MS, keepPrevious: true });
}

/** Names of the tenant's rules by id, for tables of executions. */
export function useRuleNames() {
  return useQuery({
    queryKey: ['rules', 'names'],
    queryFn: async ({ signal }) => new Map((await api<Page<Rule>>('/rules', { query: { limit: 1000 }, signal })).items.map((rule) => [rule.id, rule.name])),
    staleTime: 30_000,
  });
}

export function useRule(id: string) {
  return useQuery({ queryKey: ['rules', 'one', id], queryFn: ({ signal }) => api<Rule>(`/rules/${id}`, { signal }), refetchInterval: LIVE_MS });
}

/** The rule's events, newest first; `outcome` keeps only those with that outcome. */
export function useRuleEvents(ruleId: string, outcome?: Outcome) {
  return useLivePages<RuleEvent>(['rules', 'events', ruleId, outcome], `/rules/${ruleId}/events`, { outcome }, { pageSize: 25, refetchMs: LIVE_MS, keepPrevious: true });
}

/** How much of its action limit the rule has used on each host, right now. */
export function useRuleLimits(ruleId: string) {
  return useQuery({ queryKey: ['rules', 'limits', ruleId], queryFn: ({ signal }) => api<LimitUsage>(`/rules/${ruleId}/limits`, { signal }), refetchInterval: LIVE_MS });
}

const schedulePreview = (input: SchedulePreviewInput | null) => ({
  queryKey: ['schedules', 'preview', input],
  queryFn: ({ signal }: { signal: AbortSignal }) => api<SchedulePreview>('/schedules/preview', { method: 'POST', body: input, signal }),
  // An expression typed again soon after is not asked again; the ticks move on with the clock, so not for long.
  staleTime: 30_000,
});

/** A schedule's next ticks as the service would fire them (nothing is stored); null asks nothing. Kept on screen while the next answer comes. */
export function useSchedulePreview(input: SchedulePreviewInput | null) {
  return useQuery({ ...schedulePreview(input), enabled: input !== null, placeholderData: keepPreviousData });
}

/**
 * Asks the service to read a schedule as the preview does (the same answer, from the cache when
 * the preview has it): its refusal (a 400: not valid, or never fires), or null when it reads.
 * Another failure (the service out of reach) is no refusal: the save asks again.
 */
export function useScheduleCheck() {
  const queryClient = useQueryClient();
  return async (input: SchedulePreviewInput): Promise<ApiProblem | null> => {
    try {
      await queryClient.fetchQuery(schedulePreview(input));
      return null;
    } catch (error) {
      return error instanceof ApiProblem && error.status === 400 ? error : null;
    }
  };
}

function useRuleMutation<Variables>(mutationFn: (variables: Variables) => Promise<Rule | undefined>) {
  const queryClient = useQueryClient();
  return useMutation({
    mutationFn,
    onSuccess: (rule) => {
      if (rule) queryClient.setQueryData(['rules', 'one', rule.id], rule);
      return queryClient.invalidateQueries({ queryKey: ['rules'] });
    },
  });
}

export function useSetRuleEnabled() {
  return useRuleMutation(({ id, enabled }: { id: string; enabled: boolean }) => api<Rule>(`/rules/${id}`, { method: 'PATCH', body: { enabled } }));
}

export function useCreateRule() {
  return useRuleMutation((input: RuleInput) => api<Rule>('/rules', { method: 'POST', body: input }));
}

export function useReplaceRule() {
  return useRuleMutation(({ id, input }: { id: string; input: RuleInput }) => api<Rule>(`/rules/${id}`, { method: 'PATCH', body: input }));
}

export function useDeleteRule() {
  const queryClient = useQueryClient();
  return useMutation({
    mutationFn: (id: string) => api<void>(`/rules/${id}`, { method: 'DELETE' }),
    onSuccess: (_nothing, id) => {
      queryClient.removeQueries({ queryKey: ['rules', 'one', id] });
      return queryClient.invalidateQueries({ queryKey: ['rules', 'list'] });
    },
  });
}
