import type { AnalyticsFilters } from '../api/incident-types';
import { useNow } from '../ui/useNow';
import { useUrlFilters } from '../ui/useUrlFilters';

/** The period presets, in UTC days ending today; `custom` reads the from and to dates. */
export const PERIODS = [
  { value: '7', label: 'Last 7 days' },
  { value: '30', label: 'Last 30 days' },
  { value: '90', label: 'Last 90 days' },
  { value: 'custom', label: 'From… to…' },
] as const;

const DAY_MS = 86_400_000;

export function utcDay(ms: number): string {
  return new Date(ms).toISOString().slice(0, 10);
}

/** The analytics' period and filters, kept in the URL: a link shows the same numbers. */
export function useAnalyticsFilters() {
  // Today moves on while the page is open: the period with it, checked once a minute.
  const now = useNow(60_000);
  const { params, set } = useUrlFilters();
  const period = params.get('period') ?? '30';
  const days = Number(period);
  const range = period === 'custom' ? { from: params.get('from') ?? undefined, to: params.get('to') ?? undefined } : { from: utcDay(now - (Math.max(1, days || 30) - 1) * DAY_MS), to: utcDay(now) };
  const filters: AnalyticsFilters = {
    ...range,
    integrationId: params.get('integration') ?? undefined,
    hostname: params.get('host') ?? undefined,
    alarmName: params.get('alarm') ?? undefined,
    severity: params.get('severity') ?? undefined,
  };
  return { filters, period, params, set };
}
