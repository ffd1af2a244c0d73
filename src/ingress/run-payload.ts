import type { FieldError } from '../errors/catalogue.js';
import { tickPayload } from '../ingest/tick-payload.js';
import type { Rule } from '../rules/rule.js';
import { parseAlertPayload, type ParseResult } from './payload.js';

/** A run a person asks for (POST /api/v1/rules/{id}/run): a webhook body, and Act said apart. */
export interface RunRequest {
  payload?: Record<string, unknown> | undefined;
  act?: boolean | undefined;
}

/**
 * The payload of a person's run of a rule, read as the webhook reads its body (payload.ts), so the
 * runbook's environment and the names left out are the same: `act`, when given, is the body's
 * `Act`, and the stored payload says so. A cron rule's run gets what its ticks give the runbook,
 * the time being when it was asked (tick-payload.ts), beside the fields given.
 */
export function runPayload(rule: Rule, request: RunRequest, now: number): ParseResult {
  const body = request.act === undefined ? request.payload : { ...request.payload, Act: request.act };
  const parsed = parseAlertPayload(body);
  if (!parsed.ok) return { ok: false, errors: parsed.errors.map(underPayload) };
  if (rule.trigger.type !== 'cron') return parsed;
  const tick = tickPayload(rule.trigger, now);
  const given = parsed.payload;
  return { ok: true, payload: { ...given, raw: { ...given.raw, ...tick.raw }, env: { ...given.env, ...tick.env }, source: given.source ?? tick.source } };
}

/** The webhook's errors name fields of the body; here they are fields of its `payload`. */
function underPayload(error: FieldError): FieldError {
  return { ...error, path: error.path.replace(/^\/body/, '/body/payload') };
}
