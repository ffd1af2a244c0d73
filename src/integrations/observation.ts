import type { PolicyFetch } from '../egress/fetch.js';

/**
 * What a monitoring tool says about one alarm on one host at one time, however pitcrew heard it:
 * an alert its webhook sent (integrations/<tool>/parse.ts), or a record an import read with the
 * tool's read-only credential (integrations/<tool>/import.ts). Incidents (issue 38) are made from
 * these alone, so an imported alarm and the same alarm arriving by webhook are one incident.
 */
export interface AlarmObservation {
  /**
   * The alarm on its host, stable across its firing and its resolution and across notifications
   * and imports of it, the same whichever way pitcrew heard it:
   * - alertmanager, grafana: Alertmanager's label-set fingerprint (the `fingerprint` field of a
   *   webhook alert and of `GET /api/v2/alerts`; for a Prometheus `ALERTS` series, computed from its
   *   labels less `__name__` and `alertstate` as prometheus/common `model.LabelSet.Fingerprint` does);
   * - monasca: the alarm id; zabbix: the problem event's id (`{EVENT.ID}`, problem.get `eventid`);
   * - datadog: `<monitor id>:<group>` (group `*` when the monitor has none);
   * - pagerduty: the incident id; cloudwatch_sns: the alarm's ARN;
   * - generic: the mapping's fingerprint value, else a hash of alarm name and host.
   * An open incident with the same key takes a re-firing as another occurrence; once resolved, the
   * next firing of the key opens a new incident.
   */
  incidentKey: string;
  alarmName: string;
  hostname: string | null;
  severity: string | null;
  state: 'firing' | 'resolved';
  /**
   * When the tool says this state began (epoch ms): Alertmanager `startsAt` for firing and
   * `endsAt` for resolved, Monasca's state-change timestamp, Zabbix's clock. Null when the tool
   * gives none: the incident then takes the time pitcrew received it.
   */
  at: number | null;
}

/** Where an import of a tool stopped: the tool's own position (a time, a page token), opaque to all but its importer. */
export type ImportCursor = string;

/** What one page of an import is asked with. */
export interface ImportRequest {
  /** The integration's non-secret settings (its `config`), e.g. the tool's API address. */
  config: Record<string, unknown>;
  /** The read-only credential, opened: an API key or token, or the stored cloud credential's secret. */
  secret: unknown;
  /** Null on the first import (read the history from `since`), else where the last page stopped. */
  cursor: ImportCursor | null;
  /** Epoch ms: the start of the look-back window of a first import. */
  since: number;
  now: number;
  /** Every call to the tool goes through this: the tenant's egress policy and the import's rate limit. Only GETs (or a tool's read-only RPC) may be sent. */
  fetch: PolicyFetch;
  signal: AbortSignal;
}

/** One page read from the tool. The import applies its observations, then stores `cursor`, in one transaction. */
export interface ImportPage {
  observations: AlarmObservation[];
  /** Where the next page, or the next run, starts. */
  cursor: ImportCursor;
  /** True when another page is ready to be read now. */
  more: boolean;
  /**
   * For a tool that lists only what is firing now (Alertmanager's `GET /api/v2/alerts`): every key
   * open in the tool, so that an open incident of this integration whose key is not here resolves.
   */
  openKeys?: string[];
}

/** One tool's import: reads pages of its alarms and their history with a read-only credential. */
export interface Importer {
  importPage(request: ImportRequest): Promise<ImportPage>;
}
