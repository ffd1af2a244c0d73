import { useQuery } from '@tanstack/react-query';
import { api } from '../../api/client';
import type { Candidate, Candidates, StarterSuggestion } from '../../api/incident-types';
import type { LibraryItem } from '../../api/runbook-types';
import { emptyForm, type RuleForm } from './form';

/** What the one-click automation opens the wizard for: an integration's alarm, over a period of the dashboard. */
export interface AutomationRequest {
  integrationId: string;
  alarmName: string;
  from?: string;
  to?: string;
}

/** `/rules/new?automate=1&integrationId=…&alarmName=…` (incidents/CandidatesSection.tsx automateUrl). */
export function automationRequestOf(params: URLSearchParams): AutomationRequest | null {
  const integrationId = params.get('integrationId');
  const alarmName = params.get('alarmName');
  if (params.get('automate') !== '1' || !integrationId || !alarmName) return null;
  return { integrationId, alarmName, from: params.get('from') ?? undefined, to: params.get('to') ?? undefined };
}

/**
 * The service's suggestion for the alarm (GET /incidents/candidates, narrowed to it, whatever its
 * count and time), and the suggested starter runbook whole (GET /runbook-library/{slug}): what the
 * wizard is filled in with.
 */
export function useAutomation(request: AutomationRequest) {
  return useQuery({
    queryKey: ['rules', 'automation', request],
    queryFn: async ({ signal }) => {
      const query = { integrationId: request.integrationId, alarmName: request.alarmName, from: request.from, to: request.to, minCount: 1, minMeanSeconds: 0, limit: 1 };
      const candidates = await api<Candidates>('/incidents/candidates', { query, signal });
      const candidate = candidates.items.find((item) => item.alarmName === request.alarmName && item.integrationId === request.integrationId) ?? null;
      const slug = candidate?.suggestion.starterRunbook?.slug;
      const starter = slug ? await api<LibraryItem & { script: string }>(`/runbook-library/${slug}`, { signal }) : null;
      return { candidate, starter };
    },
    staleTime: Infinity,
  });
}

/** The presets when the service has no suggestion (the alarm is covered already, or none resolved in the period): the documented defaults, turned on. */
const FLAPPING = { enabled: true, maxEvents: 5, windowSeconds: 300, cooldownSeconds: 600 };
const LIMIT = { max: 3, windowSeconds: 3600, onLimit: 'escalate' as const };

/** An alert trigger's alarmName matching this one name (as incidents/candidates.ts exactAlarmName). */
function exactAlarmName(name: string): string {
  if (!/[*?]/.test(name) && !/^\/.+\/i?$/.test(name)) return name;
  return `/^${name.replace(/[.*+?^${}()|[\]\\/]/g, '\\$&')}$/`;
}

/**
 * The wizard's form for the alarm: an alert trigger on its integration and name, the host the
 * alert names (trigger_host), the suggested starter runbook written into the rule with its
 * flavour and notes, flapping protection and an action limit preset.
 */
export function automationForm(request: AutomationRequest, candidate: Candidate | null, starter: (LibraryItem & { script: string }) | null): RuleForm {
  const suggestion = candidate?.suggestion;
  const flapping = suggestion?.flapping ?? FLAPPING;
  const limit = suggestion?.actionLimit ?? LIMIT;
  const form = emptyForm();
  return {
    ...form,
    name: (suggestion?.name ?? `${request.alarmName}: automation`).slice(0, 200),
    trigger: suggestion?.trigger ?? { type: 'alert', integrationId: request.integrationId, alarmName: exactAlarmName(request.alarmName) },
    flappingEnabled: flapping.enabled,
    flappingMaxEvents: String(flapping.maxEvents),
    flappingWindowSeconds: String(flapping.windowSeconds),
    flappingCooldownSeconds: String(flapping.cooldownSeconds),
    actionType: 'script',
    targetType: 'trigger_host',
    ...(starter && suggestion?.starterRunbook
      ? { flavour: suggestion.starterRunbook.flavour, runbookSource: 'inline' as const, interpreter: starter.interpreter, script: withPrelude(starter.script, suggestion.starterRunbook.prelude), notes: starter.description }
      : {}),
    limitEnabled: true,
    limitMax: String(limit.max),
    limitWindowSeconds: String(limit.windowSeconds),
    onLimit: limit.onLimit,
  };
}

/**
 * The script with the prelude (the variables taken from the alert's labels) after its opening
 * comment: the interpreter line and the comment saying what the script is stay first.
 */
export function withPrelude(script: string, prelude: string): string {
  if (prelude === '') return script;
  const opening = /^(?:#.*(?:\n|$))*/.exec(script)![0];
  const separator = opening === '' || opening.endsWith('\n') ? '' : '\n';
  return opening + separator + prelude + script.slice(opening.length);
}

/** What the wizard says it was filled in with, and why. */
export function automationNotice(request: AutomationRequest, candidate: Candidate | null): string {
  if (!candidate) return `Filled in for “${request.alarmName}”: its alerts on this integration, on the host each alert names, with flapping protection and an action limit. Pick the runbook that fixes it.`;
  const starter = candidate.suggestion.starterRunbook;
  const runbook = starter ? ` The suggested runbook is the starter “${starter.name}”: it ${starter.why}; ${taken(starter.labelDefaults)}read its notes and adapt it to your hosts before you create the rule.` : ' No starter runbook fits this kind of alarm: write the fix.';
  return `Filled in for “${candidate.alarmName}”, which ${candidate.why}.${runbook} Creating the rule links it to the alarm’s incidents.`;
}

/** "the lines after its opening comment take ServiceName from the alert’s service or unit label, unless set; " */
function taken(defaults: StarterSuggestion['labelDefaults']): string {
  if (defaults.length === 0) return '';
  const each = defaults.map(({ variable, labels }) => `${variable} from the alert’s ${labels.map((l) => l.replace(/^LABEL_/, '')).join(' or ')} label`);
  return `the lines after its opening comment take ${each.join(', ')}, unless set; `;
}
