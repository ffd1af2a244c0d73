import type { FieldError } from '../errors/catalogue.js';

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
