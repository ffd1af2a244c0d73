import type { AlarmState } from '../engine/alarm-history.js';

/** A payload name not exported to the runbook's environment, and why. */
export interface SkippedEnv {
  name: string;
  reason: string;
}

/**
 * Skipped names listed one by one; the rest are counted in one last entry. Listing them all let a
 * 256 KiB body of tiny pairs with invalid names ({"k-1":1, …}) make 23,001 entries: a 2.6 MB reply,
 * and as much stored with the event, ten times the body.
 */
export const MAX_SKIPPED_LISTED = 100;
export const UNLISTED_NAME = '…';
const UNLISTED_COUNT = /^(\d+) more names/;

/** The last entry of a list cut at MAX_SKIPPED_LISTED: how many more names were skipped. */
export function unlistedEntry(count: number): SkippedEnv {
  return { name: UNLISTED_NAME, reason: `${count} more names were not exported either; only the first ${MAX_SKIPPED_LISTED} are listed (the event keeps the whole payload)` };
}

/** `skipped` with `more` after its listed names, still at most MAX_SKIPPED_LISTED listed and the rest counted. */
export function withSkipped(skipped: readonly SkippedEnv[], more: readonly SkippedEnv[]): SkippedEnv[] {
  const last = skipped.at(-1);
  const counted = last?.name === UNLISTED_NAME ? Number(UNLISTED_COUNT.exec(last.reason)?.[1] ?? 0) : 0;
  const listed = [...skipped.filter((entry) => entry.name !== UNLISTED_NAME), ...more];
  const unlisted = counted + Math.max(0, listed.length - MAX_SKIPPED_LISTED);
  const kept = listed.slice(0, MAX_SKIPPED_LISTED);
  return unlisted > 0 ? [...kept, unlistedEntry(unlisted)] : kept;
}

/**
 * The payload as a rule's action takes it: the variables its kind refuses beyond those refused for
 * every runbook at ingress (the CLI Machine's, actions/cli/environment.ts) left out of `env` and
 * listed in `skippedEnv` with why, so that the reply and the stored event say so.
 */
export function payloadForKind(payload: AlertPayload, kind: { refusesEnv?(name: string): string | undefined }): AlertPayload {
  if (!kind.refusesEnv) return payload;
  const refused: SkippedEnv[] = [];
  for (const name of Object.keys(payload.env)) {
    const reason = kind.refusesEnv(name);
    if (reason) refused.push({ name, reason });
  }
  if (refused.length === 0) return payload;
  const env = { ...payload.env };
  for (const { name } of refused) delete env[name];
  return { ...payload, env, skippedEnv: withSkipped(payload.skippedEnv, refused) };
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
