import type { Execution, RuleEvent } from './types';

/* The incidents API (DESIGN.md §7, docs/incidents.md): only the fields the UI reads. */

export type IncidentState = 'open' | 'resolved';
export type ResolvedBy = 'tool' | 'automation' | 'manual';

export interface Incident {
  id: string;
  state: IncidentState;
  alarmName: string;
  severity: string | null;
  hostname: string | null;
  integrationId: string | null;
  fingerprint: string;
  openedAt: string;
  resolvedAt: string | null;
  resolutionSeconds: number | null;
  occurrences: number;
  resolvedBy: ResolvedBy | null;
  resolvedByUser: string | null;
  lastSeenAt: string;
  ruleIds: string[];
  /** The first 100 executions of the incident, oldest first; executionCount counts them all. */
  executionIds: string[];
  executionCount: number;
}

export interface IncidentAlert {
  id: string;
  receivedAt: string;
  source: string;
  state: 'firing' | 'resolved';
  alarmName: string | null;
  hostName: string | null;
  severity: string | null;
  labels: Record<string, string>;
  annotations: Record<string, string>;
}

export interface IncidentDetail extends Incident {
  alerts: IncidentAlert[];
  alertCount: number;
  events: RuleEvent[];
  eventCount: number;
  executions: Execution[];
}

export interface TroubleshootReply {
  executionId: string;
  eventId: string;
  hostname: string;
}

export interface AnalyticsFilters {
  from?: string;
  to?: string;
  integrationId?: string;
  hostname?: string;
  alarmName?: string;
  severity?: string;
}

interface Side {
  count: number;
  meanSeconds: number | null;
}

export interface Analytics {
  period: { from: string; to: string; days: number };
  resolved: number;
  automated: number;
  automatedShare: number | null;
  meanSeconds: number | null;
  frequent: Array<{ alarmName: string; count: number }>;
  slowest: Array<{ alarmName: string; count: number; meanSeconds: number; p50Seconds: number | null; p90Seconds: number | null; maxSeconds: number }>;
  mttrByDay: Array<{ day: string; count: number; automated: number; meanSeconds: number }>;
  hosts: Array<{ hostname: string; count: number }>;
  rules: Array<{ ruleId: string; ruleName: string; enabled: boolean; integrationId: string; alarmName: string; createdAt: string; before: Side; after: Side }>;
}

export interface StarterSuggestion {
  slug: string;
  name: string;
  flavour: 'autofix' | 'diagnostics';
  why: string;
  /** The starter's variables a label of the alarm's newest alert gives (LABEL_<name>, the first set winning). */
  labelDefaults: Array<{ variable: string; labels: string[] }>;
  /** The lines that take them, written after the script's opening comment; empty for none. */
  prelude: string;
}

export interface Candidate {
  integrationId: string;
  alarmName: string;
  count: number;
  meanSeconds: number;
  totalSeconds: number;
  severities: string[];
  kind: 'certificate' | 'disk' | 'memory' | 'service_down' | 'other';
  rulesOff: Array<{ id: string; name: string }>;
  why: string;
  typicalHostname: string | null;
  suggestion: {
    name: string;
    trigger: { type: 'alert'; integrationId: string; alarmName: string; severity?: string[] };
    target: { type: 'trigger_host' };
    starterRunbook: StarterSuggestion | null;
    labels: string[];
    flapping: { enabled: boolean; maxEvents: number; windowSeconds: number; cooldownSeconds: number };
    actionLimit: { max: number; windowSeconds: number; onLimit: 'escalate' | 'drop' };
  };
}

export interface Candidates {
  period: Analytics['period'];
  items: Candidate[];
}
