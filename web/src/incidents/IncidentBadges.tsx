import type { IncidentState, ResolvedBy } from '../api/incident-types';

type Tone = 'good' | 'bad' | 'warn' | 'info' | 'neutral';

/** Severities as tools name them: the loud ones red, the middling ones amber, the rest plain. */
function severityTone(severity: string): Tone {
  const s = severity.toLowerCase();
  if (/crit|disaster|emerg|fatal|high|p1|sev1|error|page/.test(s)) return 'bad';
  if (/warn|average|medium|p2|p3|sev2|sev3/.test(s)) return 'warn';
  if (/info|low|p4|p5/.test(s)) return 'info';
  return 'neutral';
}

export function SeverityBadge({ severity }: { severity: string | null }) {
  if (!severity) return <span className="muted">–</span>;
  return <span className={`badge badge-${severityTone(severity)}`}>{severity}</span>;
}

export function IncidentStateBadge({ state }: { state: IncidentState }) {
  return <span className={`badge badge-${state === 'open' ? 'bad' : 'good'}`}>{state}</span>;
}

const RESOLVED_BY: Record<ResolvedBy, { label: string; tone: Tone; title: string }> = {
  tool: { label: 'by the tool', tone: 'neutral', title: 'the monitoring tool said it resolved' },
  automation: { label: 'by automation', tone: 'good', title: "it resolved within the tenant's window after a pitcrew fix of it" },
  manual: { label: 'by hand', tone: 'info', title: 'a person resolved it' },
};

export function ResolvedByBadge({ by }: { by: ResolvedBy | null }) {
  if (!by) return null;
  const { label, tone, title } = RESOLVED_BY[by];
  return (
    <span className={`badge badge-${tone}`} title={title}>
      {label}
    </span>
  );
}
