import type { AlarmState } from '../engine/alarm-history.js';

/** A payload name not exported to the runbook's environment, and why. */
export interface SkippedEnv {
  name: string;
  reason: string;
}

/** What the event writer stores: a webhook body understood (ingress/payload.ts): its known fields, the runbook environment and what was left out. */
export interface AlertPayload {
  /** The JSON object as posted ({} for an empty body). */
  raw: Record<string, unknown>;
  hostName: string | undefined;
  appName: string | undefined;
  alarmName: string | undefined;
  severity: string | undefined;
  source: string | undefined;
  act: boolean;
  /** firing or resolved when the payload says (State, or state/status as Monasca and Alertmanager send it). */
  alarmState: AlarmState | undefined;
  env: Record<string, string>;
  skippedEnv: SkippedEnv[];
}
