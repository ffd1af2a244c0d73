/*
 * The shapes of the integrations API (docs/integrations.md) that the UI reads and sends.
 * A secret (signing secret, token) is write-only: the view says only whether one is set.
 */
import type { Action, AlertOn, InfrastructureType, Target } from './types';

export const INTEGRATION_TYPES = ['alertmanager', 'grafana', 'monasca', 'zabbix', 'datadog', 'pagerduty', 'cloudwatch_sns', 'generic'] as const;
export type IntegrationType = (typeof INTEGRATION_TYPES)[number];

export interface Integration {
  id: string;
  name: string;
  type: IntegrationType;
  /** Holds `<api_key>` where the tenant's API key goes. */
  url: string;
  /** One alert in the tool's own body, posted to the URL (`${PITCREW_API_KEY}` from the shell); absent when only the tool can sign. */
  curl?: string;
  /** A test alert through the management API, a dry run (`${PITCREW_TOKEN}` from the shell). */
  testCurl: string;
  config: Record<string, unknown>;
  hasSecret: boolean;
  hasGraphSecret: boolean;
  status: { lastAlertAt: string | null; lastError: string | null; lastErrorAt: string | null };
  /** The import of the tool's alarms (docs/incidents-import.md); null until set up. */
  import: ImportSettings | null;
  /** What an import of this tool needs; null: the tool has no import. */
  importNeeds: { tool: string; secret: string; credentialProviders: string[] } | null;
  createdAt: string;
  updatedAt: string;
}

export interface IntegrationInput {
  name: string;
  type: IntegrationType;
  config?: Record<string, unknown>;
  secret?: string;
  /** Write-only: what the tool's graphs are read with (Grafana's service account token; Prometheus's bearer token or login). */
  graphSecret?: string | { username: string; password: string };
}

export interface AlertEvent {
  ruleId: string;
  eventId: string | null;
  outcome: string;
}

export interface LoggedAlert {
  id: string;
  receivedAt: string;
  source: string;
  state: 'firing' | 'resolved';
  fingerprint: string;
  alarmName: string | null;
  hostName: string | null;
  severity: string | null;
  labels: Record<string, string>;
  annotations: Record<string, string>;
  events: AlertEvent[];
}

export interface TriggerMatch {
  alarmName?: string;
  severity?: string[];
  labels?: Record<string, string>;
  on?: AlertOn;
  hostLabel?: string;
}

/** The rule as written so far, which the preview decides with (the service's defaults: a script on the trigger host). */
export interface PreviewDraft {
  target?: Target;
  action?: Action;
  infrastructureType?: InfrastructureType;
}

export interface TriggerPreview {
  scanned: number;
  matched: number;
  items: Array<{
    alert: LoggedAlert;
    matches: boolean;
    /** What the ingest would decide now (accepted, recorded, no_target…); null when it does not match. */
    outcome: string | null;
    reason: string | null;
    acts: boolean;
    hostName: string | null;
    /** The hosts it would act on (the first 20); targetCount: how many. */
    targets: string[];
    targetCount: number;
  }>;
}

export interface TestAlertInput {
  alarmName?: string;
  hostName?: string;
  severity?: string;
  act?: boolean;
}

export interface TestAlertResult {
  alert: {
    alarmName: string | null;
    hostName: string | null;
    /** ifActed: a dry run's, what the rule would decide had the alert asked to act. */
    events: Array<AlertEvent & { reason: string | null; executionIds: string[]; ifActed?: { outcome: string; reason: string | null } }>;
  };
}

export interface KeystoneLogin {
  version: 'v3' | 'v2.0';
  identityUrl: string;
  username: string;
  password: string;
  project: string;
  userDomainName?: string;
  projectDomainName?: string;
}

export interface MonascaCoverage {
  notificationMethods: Array<{ id: string; name: string; address: string }>;
  alarmDefinitions: Array<{ id: string; name: string; severity: string | null; actionsEnabled: boolean; onAlarm: boolean; onOk: boolean; onUndetermined: boolean }>;
  covered: number;
}

export type ImportState = 'queued' | 'running' | 'succeeded' | 'failed';

export interface ImportSettings {
  enabled: boolean;
  intervalSeconds: number;
  lookbackDays: number;
  requestsPerSecond: number;
  credentialId: string | null;
  hasSecret: boolean;
  nextAt: string | null;
  status: { lastImportId: string | null; state: ImportState | null; startedAt: string | null; endedAt: string | null; imported: number | null; importedTotal: number; lastError: string | null; lastErrorAt: string | null };
}

/** PATCH /integrations/{id} {import}: a secret is write-only (sent, never shown back); null removes it. */
export interface ImportPatch {
  enabled: boolean;
  intervalSeconds?: number;
  lookbackDays?: number;
  credentialId?: string | null;
  secret?: unknown;
}

export interface ImportRun {
  id: string;
  state: ImportState;
  trigger: 'schedule' | 'manual';
  startedAt: string;
  endedAt?: string;
  imported: number;
  pages: number;
  error?: string;
}
