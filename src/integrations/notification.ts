import type { FieldError } from '../errors/catalogue.js';
import type { AlarmObservation } from './observation.js';

/**
 * One alert of a monitoring tool's notification, read from the tool's own body (DESIGN.md §7,
 * issue 17). A notification may carry several (Alertmanager groups them): each becomes its own
 * occurrence. Every module of integrations/<tool>/ turns a body into these.
 */
export interface ToolAlert {
  /** The alert's name as the tool knows it: Alertmanager `alertname`, a Monasca alarm definition's name. */
  alarmName: string | undefined;
  /** The host the alert is about, as the tool names it (rules may pick another label). */
  hostName: string | undefined;
  /** The label the tool reads the host from (Alertmanager's `instance`, or the integration's config.hostLabel), so that an alert without it says which. */
  hostLabel?: string | undefined;
  severity: string | undefined;
  state: 'firing' | 'resolved';
  /**
   * Identifies this alert across notifications, so that a re-sent notification of an alert
   * already acted on is a duplicate: stable for the same alert and state (e.g. Alertmanager's
   * `fingerprint` + `startsAt` + status), different for a new firing.
   */
  fingerprint: string;
  /** The alarm on its host across its firing and resolution: AlarmObservation.incidentKey, computed as observation.ts fixes it per tool. */
  incidentKey: string;
  /** When the tool says this state began (epoch ms; AlarmObservation.at), or null when the body does not say. */
  at: number | null;
  /** Labels, dimensions or tags, flattened to text: they reach the script as environment variables. */
  labels: Record<string, string>;
  /** Annotations or other descriptive fields (summary, description, runbook URL). */
  annotations: Record<string, string>;
  /** The tool's own part of the body for this alert, stored as the event's payload. */
  raw: Record<string, unknown>;
}

/** What a tool's body was understood as. */
export type ToolNotification =
  | { kind: 'alerts'; alerts: ToolAlert[] }
  /** A handshake the tool needs answered, never acted on (SNS SubscriptionConfirmation, PagerDuty ping). */
  | { kind: 'control'; description: string; confirm?: () => Promise<void> }
  | { kind: 'invalid'; errors: FieldError[] };

/** What a parser reads: the body as the tool sent it, and what the integration holds for it. */
export interface ToolRequest {
  /** The body's bytes as received (signatures are computed over these). */
  rawBody: string;
  /** The body parsed as JSON when the content type was JSON (or the tool's text/plain JSON); else undefined. */
  body: unknown;
  /** Lower-case header names. */
  headers: Record<string, string | string[] | undefined>;
  /** The integration's settings (non-secret), as the user set them. */
  config: Record<string, unknown>;
  /** The integration's secret (signing secret), opened, when it has one. */
  secret: string | undefined;
  now: number;
}

/** What the alert says of its alarm, for its incident (incidents/): an alert without a name is known by its key. */
export function observationOf(alert: ToolAlert): AlarmObservation {
  return {
    incidentKey: alert.incidentKey,
    alarmName: alert.alarmName ?? alert.incidentKey,
    hostname: alert.hostName ?? null,
    severity: alert.severity ?? null,
    state: alert.state,
    at: alert.at,
  };
}

/** An RFC 3339 / ISO 8601 time as epoch ms; null when absent, unreadable, or Go's zero time (0001-01-01, "not set"). */
export function toolTime(value: unknown): number | null {
  if (typeof value !== 'string' || value.trim() === '') return null;
  const ms = Date.parse(value);
  return Number.isFinite(ms) && ms > 0 ? ms : null;
}
