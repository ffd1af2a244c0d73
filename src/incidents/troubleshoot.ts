import { createHash } from 'node:crypto';
import type { Kysely } from 'kysely';
import { Type, type Static } from 'typebox';
import { notFound, PitcrewError } from '../errors/catalogue.js';
import { FLAPPING_DEFAULTS, type Rule } from '../rules/rule.js';
import type { RunbookRef } from '../rules/schema.js';
import { toRow } from '../rules/repository.js';
import type { RunbookLibrary } from '../runbooks/library/library.js';
import { alertVariable } from '../runbooks/library/alert-labels.js';
import { getLatest, getVersion, type RunbookAt } from '../runbooks/repository.js';
import type { Database } from '../store/schema.js';

/** DESIGN.md §7: POST /api/v1/incidents/{id}/troubleshoot. */
export const TroubleshootBody = Type.Object({
  runbookId: Type.Optional(Type.String({ format: 'uuid', description: 'a stored runbook (GET /api/v1/runbooks): its latest version, or `version`' })),
  version: Type.Optional(Type.Integer({ minimum: 1, description: 'with runbookId: the version to run' })),
  starter: Type.Optional(Type.String({ minLength: 1, maxLength: 100, description: 'a starter runbook shipped with pitcrew, by its slug (GET /api/v1/runbook-library): top-memory, log-tail, …' })),
  hostname: Type.Optional(Type.String({ minLength: 1, maxLength: 255, description: "the host to run it on; default the incident's" })),
  timeoutSeconds: Type.Optional(Type.Integer({ minimum: 1, maximum: 3600, description: 'default 300' })),
}, { additionalProperties: false, description: 'one of runbookId or starter' });
export type TroubleshootBody = Static<typeof TroubleshootBody>;

export const TroubleshootReply = Type.Object({
  executionId: Type.String({ format: 'uuid', description: 'the run: GET /api/v1/executions/{id}, its output live at …/stream' }),
  eventId: Type.String({ format: 'uuid' }),
  hostname: Type.String(),
});

/** What a run on an incident reads of it. */
export interface IncidentForRun {
  id: string;
  alarmName: string;
  severity: string | null;
  hostname: string | null;
  integrationId: string | null;
  state: string;
  /** Its newest alert (migration 0032), null when it has none. */
  lastAlertId: string | null;
}

/** The incident, in the caller's tenant: another tenant's id is the same 404 as an unknown one. */
export async function incidentForRun(db: Kysely<Database>, tenantId: string, id: string): Promise<IncidentForRun> {
  const row = await db.selectFrom('incidents').select(['id', 'alarm_name', 'severity', 'hostname', 'integration_id', 'state', 'last_alert_id']).where('id', '=', id).where('tenant_id', '=', tenantId).executeTakeFirst();
  if (!row) throw notFound('incident', id);
  return { id: row.id, alarmName: row.alarm_name, severity: row.severity, hostname: row.hostname, integrationId: row.integration_id, state: row.state, lastAlertId: row.last_alert_id };
}

/**
 * The webhook body a run on the incident gets (what a runbook reads as $HostName, $AlarmName…):
 * the incident's alarm, host and severity, and the labels and annotations of its newest alert as
 * the alert's own runs got them (`LABEL_<name>`, `ANNOTATION_<name>`: ingress/alert-payload.ts).
 */
export async function incidentPayload(db: Kysely<Database>, tenantId: string, incident: IncidentForRun, hostname: string | null): Promise<Record<string, unknown>> {
  // Its newest alert heads its chain (migration 0032).
  const alert = incident.lastAlertId === null ? undefined
    : await db.selectFrom('alerts').select(['labels', 'annotations', 'source']).where('id', '=', incident.lastAlertId).where('tenant_id', '=', tenantId).executeTakeFirst();
  const metaData: Record<string, string> = {};
  const put = (prefix: 'LABEL_' | 'ANNOTATION_', values: Record<string, string>) => {
    for (const [name, value] of Object.entries(values)) {
      const variable = alertVariable(prefix, name);
      if (!Object.hasOwn(metaData, variable)) metaData[variable] = value;
    }
  };
  if (alert) {
    put('LABEL_', JSON.parse(alert.labels) as Record<string, string>);
    put('ANNOTATION_', JSON.parse(alert.annotations) as Record<string, string>);
  }
  return {
    AlarmName: incident.alarmName,
    ...(hostname ? { HostName: hostname } : {}),
    ...(incident.severity ? { Severity: incident.severity } : {}),
    ...(alert ? { Source: alert.source } : {}),
    ...(Object.keys(metaData).length > 0 ? { MetaData: metaData } : {}),
  };
}

/**
 * The rule row a tenant's troubleshooting runs are stored under: events and executions name a
 * rule (a foreign key), and these runs belong to none of the tenant's. One per tenant, its id
 * derived from the tenant's so that two first runs at once make one row; stored deleted, so no
 * list, trigger or edit ever finds it (deleted rules keep their events and runs readable).
 */
export function troubleshootRuleId(tenantId: string): string {
  const hex = createHash('sha256').update(`pitcrew troubleshooting runs\n${tenantId}`).digest('hex');
  // A UUID of version 8 (RFC 9562: vendor-specific), variant 10.
  return `${hex.slice(0, 8)}-${hex.slice(8, 12)}-8${hex.slice(13, 16)}-${((Number.parseInt(hex[16]!, 16) & 0x3) | 0x8).toString(16)}${hex.slice(17, 20)}-${hex.slice(20, 32)}`;
}

export const TROUBLESHOOT_RULE_NAME = 'Troubleshoot now';

/** Makes the tenant's troubleshooting rule row if it is not there yet. */
export async function ensureTroubleshootRule(db: Kysely<Database>, tenantId: string, now: number): Promise<void> {
  const rule = composedRule(tenantId, { script: 'true', sha256: '' }, 'localhost', now);
  const row = { ...toRow(rule), trigger_type: 'troubleshoot', trigger: JSON.stringify({ type: 'troubleshoot' }), deleted_at: now };
  await db.insertInto('rules').values(row).onConflict((oc) => oc.column('id').doNothing()).execute();
}

/** What a troubleshooting run runs: a diagnostics script on one host, decided as a rule would be, with no limit or flapping to hold it. */
export function composedRule(tenantId: string, runbook: RunbookRef, hostname: string, now: number, timeoutSeconds?: number): Rule {
  return {
    id: troubleshootRuleId(tenantId),
    tenantId,
    name: TROUBLESHOOT_RULE_NAME,
    enabled: true,
    // Only what the in-memory decision reads: the stored row says `troubleshoot`.
    trigger: { type: 'webhook' },
    triggerId: null,
    action: { type: 'script', flavour: 'diagnostics', runbook, ...(timeoutSeconds === undefined ? {} : { timeoutSeconds }) },
    target: { type: 'specific_host', hostname },
    infrastructureType: 'On_Premise',
    actionLimit: null,
    flapping: { ...FLAPPING_DEFAULTS, enabled: false },
    // A person asked for this diagnostics run just now: their asking is the approval.
    approval: null,
    createdAt: now,
    updatedAt: now,
  };
}

/** The runbook the body names, whole, as a rule stores it (rules/runbook-refs.ts): a stored one's version, or a starter's script. */
export async function troubleshootRunbook(db: Kysely<Database>, library: RunbookLibrary, tenantId: string, body: TroubleshootBody): Promise<RunbookRef> {
  if ((body.runbookId === undefined) === (body.starter === undefined)) {
    const message = 'name one runbook: runbookId (a stored runbook) or starter (one of the starter library: GET /api/v1/runbook-library)';
    throw new PitcrewError('PITCREW_ERR_VALIDATION', `/body: ${message}`, { fieldErrors: [{ path: '/body/runbookId', message }] });
  }
  if (body.version !== undefined && body.runbookId === undefined) throw fieldError('/body/version', 'a version goes with runbookId');
  if (body.starter !== undefined) {
    const entry = library.entries.find((e) => e.slug === body.starter);
    if (!entry) throw fieldError('/body/starter', `not in the starter library; one of: ${library.entries.map((e) => e.slug).join(', ')}`);
    return { script: entry.script, interpreter: entry.interpreter, name: `${entry.name} (starter library)`, sha256: entry.sha256 };
  }
  let at: RunbookAt;
  try {
    at = body.version === undefined ? await getLatest(db, tenantId, body.runbookId!) : await getVersion(db, tenantId, body.runbookId!, body.version, '/body/version');
  } catch (error) {
    if (!(error instanceof PitcrewError) || error.code !== 'PITCREW_ERR_NOT_FOUND') throw error;
    if (error.fieldErrors?.length) throw fieldError('/body/version', error.fieldErrors[0]!.message);
    throw fieldError('/body/runbookId', `no runbook ${body.runbookId} in this tenant; pick one from GET /api/v1/runbooks`);
  }
  const { version } = at;
  return {
    runbookId: version.runbook_id,
    name: version.name,
    resolvedVersion: version.version,
    interpreter: version.interpreter as NonNullable<RunbookRef['interpreter']>,
    script: version.script,
    sha256: version.sha256,
  };
}

function fieldError(path: string, message: string): PitcrewError {
  return new PitcrewError('PITCREW_ERR_VALIDATION', `${path}: ${message}`, { fieldErrors: [{ path, message }] });
}
