import type { Escalation } from '../api/types';
import { useLivePages } from '../api/useLivePages';

export interface EscalationFilters {
  ruleId?: string;
  hostname?: string;
  state?: string;
}

/** Escalations to a person, newest first: a new one shows within seconds of the alarm that raised it. */
export function useEscalations(filters: EscalationFilters, pageSize = 50) {
  return useLivePages<Escalation>(['escalations', 'list', filters, pageSize], '/escalations', { ...filters }, { pageSize, refetchMs: 4000, keepPrevious: true });
}
