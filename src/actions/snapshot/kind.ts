import type { GraphAlert } from '../../integrations/graph-source.js';
import { describeHost } from '../../engine/alarm-history.js';
import { times } from '../../errors/counts.js';
import type { Rule } from '../../rules/rule.js';
import type { ActionKind, KindSpec, RunContext } from '../kind.js';

/** The window drawn when the rule says none: an hour each side of the alert's start, up to now. */
export const DEFAULT_WINDOW_MINUTES = 60;

/**
 * What a graph_snapshot execution captures (docs/graph-snapshots.md), copied from the rule and the
 * event when the event arrives: a later edit of the rule, or of the integration's graphs, never
 * changes which alert an earlier event's picture is about. It runs on the service.
 */
export interface GraphSnapshotSpec extends KindSpec {
  kind: 'graph_snapshot';
  /** The integration whose tool is read: the action's, else the rule's alert trigger's. */
  integrationId: string | null;
  graphs: string[];
  windowMinutes: number;
  /** The alert a capture is about, copied from the event when it arrives. */
  alert: GraphAlert;
  ruleName: string;
  timeoutSeconds: number;
}

/** The part of a rule's action (or a fix's `snapshot`) that says what to capture. */
export interface SnapshotRequest {
  integrationId?: string | undefined;
  graphs?: string[] | undefined;
  windowMinutes?: number | undefined;
}

export const graphSnapshotKind: ActionKind = {
  type: 'graph_snapshot',
  escalatesAtLimit: false,
  plan(rule, event) {
    return { runsOn: 'service', runs: [{ about: rule.target.type === 'specific_host' ? rule.target.hostname : event.hostName }] };
  },
  limitedReason(used, about, limit) {
    return `graphs were captured ${times(used)} about ${describeHost(about)} within ${limit.windowSeconds} s, its action limit (max ${limit.max}): not captured again`;
  },
  spec(rule, run): GraphSnapshotSpec {
    if (rule.action.type !== 'graph_snapshot') throw new Error(`rule ${rule.id} has no graph_snapshot action`);
    return snapshotSpec(rule, rule.action, run);
  },
  describe(spec) {
    const graphs = Array.isArray(spec.graphs) && spec.graphs.length > 0 ? `${spec.graphs.length} graph(s) of the rule` : "the alert's graph";
    return `capture ${graphs} from the monitoring tool`;
  },
  notDone(rule, hostname) {
    return `did not capture the graphs of rule "${rule.name}" about ${hostname} for this alarm or later ones in the window`;
  },
};

/** The spec of one capture, for a graph_snapshot action or a fix's "capture graphs too". */
export function snapshotSpec(rule: Rule, request: SnapshotRequest, run: RunContext): GraphSnapshotSpec {
  return {
    kind: 'graph_snapshot',
    integrationId: request.integrationId ?? (rule.trigger.type === 'alert' ? rule.trigger.integrationId : null),
    graphs: request.graphs ?? [],
    windowMinutes: request.windowMinutes ?? DEFAULT_WINDOW_MINUTES,
    alert: alertOf(rule, run),
    ruleName: rule.name,
    timeoutSeconds: Math.min(run.expirySeconds, CAPTURE_SECONDS),
  };
}

/** A capture that has not ended in this long has failed: the picture is of an alert happening now. */
const CAPTURE_SECONDS = 120;

/**
 * The alert as the event carries it: an integration's alert is stored as the tool sent it
 * (Alertmanager: labels, startsAt, generatorURL); a webhook call's `MetaData` stands for labels.
 */
function alertOf(rule: Rule, run: RunContext): GraphAlert {
  const payload = parseObject(run.event.payload);
  const labels = textRecord(payload.labels) ?? textRecord(payload.MetaData) ?? {};
  const startsAt = typeof payload.startsAt === 'string' ? Date.parse(payload.startsAt) : Number.NaN;
  return {
    alarmName: run.env.AlarmName ?? labels.alertname ?? rule.name,
    hostname: run.hostname,
    labels,
    generatorURL: typeof payload.generatorURL === 'string' ? payload.generatorURL : undefined,
    startedAt: Number.isFinite(startsAt) ? startsAt : run.event.receivedAt,
    payload,
  };
}

function parseObject(text: string): Record<string, unknown> {
  try {
    const value = JSON.parse(text) as unknown;
    return typeof value === 'object' && value !== null && !Array.isArray(value) ? (value as Record<string, unknown>) : {};
  } catch {
    return {};
  }
}

function textRecord(value: unknown): Record<string, string> | undefined {
  if (typeof value !== 'object' || value === null || Array.isArray(value)) return undefined;
  return Object.fromEntries(Object.entries(value).filter((entry): entry is [string, string] => typeof entry[1] === 'string'));
}

export function isGraphSnapshotSpec(spec: unknown): spec is GraphSnapshotSpec {
  return typeof spec === 'object' && spec !== null && (spec as { kind?: unknown }).kind === 'graph_snapshot';
}
