import { useMutation, useQuery, useQueryClient } from '@tanstack/react-query';
import { api } from '../api/client';
import type { Outcome } from '../api/types';

/** GET /rules/{id}/run-fields: what the Run now form offers, prefilled from the rule's last events. */
export interface RunFields {
  fields: Array<'HostName' | 'AlarmName'>;
  payload: { HostName?: string; AlarmName?: string; MetaData: Record<string, string> };
  /** Names the rule's action reads from the payload (its script's $Name, a cloud action's instance field). */
  actionVariables: string[];
  lastEventId: string | null;
  eventsRead: number;
}

/** The webhook's 202, which Run now answers with. */
export interface RunReply {
  eventId: string;
  outcome: Outcome;
  reason: string | null;
  executionIds: string[];
  executionCount: number;
  skippedEnv: Array<{ name: string; reason: string }>;
  act: boolean;
  replayed: boolean;
}

/** What the form holds: the fields as typed, and MetaData as rows (a key may be typed before its value). */
export interface RunForm {
  HostName: string;
  AlarmName: string;
  metaData: Array<{ key: string; value: string }>;
  dryRun: boolean;
}

/**
 * The form, prefilled: each field and MetaData key as the rule's newest events had it, then the
 * names its action reads that no event gave, empty, so the person sees what the runbook expects.
 */
export function initialForm(fields: RunFields): RunForm {
  const given = fields.payload.MetaData;
  const own = new Set<string>([...fields.fields, ...Object.keys(given)]);
  return {
    HostName: fields.payload.HostName ?? '',
    AlarmName: fields.payload.AlarmName ?? '',
    metaData: [
      ...Object.entries(given).map(([key, value]) => ({ key, value })),
      ...fields.actionVariables.filter((name) => !own.has(name)).map((key) => ({ key, value: '' })),
    ],
    dryRun: false,
  };
}

/** POST /rules/{id}/run's body: empty fields and rows without a key left out. */
export function runBody(form: RunForm, fields: RunFields['fields']): { payload: Record<string, unknown>; act: boolean } {
  const payload: Record<string, unknown> = {};
  for (const field of fields) if (form[field].trim() !== '') payload[field] = form[field].trim();
  const pairs = form.metaData.filter((row) => row.key.trim() !== '').map((row) => [row.key.trim(), row.value] as const);
  if (pairs.length > 0) payload.MetaData = Object.fromEntries(pairs);
  return { payload, act: !form.dryRun };
}

export function useRunFields(ruleId: string, enabled: boolean) {
  // Read when the form opens, never refreshed under the person's typing.
  return useQuery({ queryKey: ['rules', 'run-fields', ruleId], queryFn: ({ signal }) => api<RunFields>(`/rules/${ruleId}/run-fields`, { signal }), enabled, staleTime: Infinity, gcTime: 0 });
}

export function useRunNow(ruleId: string) {
  const queryClient = useQueryClient();
  return useMutation({
    mutationFn: (body: { payload: Record<string, unknown>; act: boolean }) => api<RunReply>(`/rules/${ruleId}/run`, { method: 'POST', body }),
    // The page's events, limits and executions show the run at once, not at their next refresh.
    onSuccess: () => Promise.all([queryClient.invalidateQueries({ queryKey: ['rules', 'events', ruleId] }), queryClient.invalidateQueries({ queryKey: ['rules', 'one', ruleId] }), queryClient.invalidateQueries({ queryKey: ['executions'] })]),
  });
}
