import type { SnapshotRequest } from '../../api/types';
import type { FormErrors, RuleForm } from './form';

/** The graphs a rule captures (docs/graph-snapshots.md): a graph_snapshot action's, or a fix's "capture graphs too". */
export interface SnapshotFields {
  /** On a script, cloud or CLI action: capture graphs beside the fix. */
  snapshotEnabled: boolean;
  /** Empty: the alert trigger's integration. */
  snapshotIntegrationId: string;
  /** One query or panel a line; empty: the alert's own. */
  snapshotGraphs: string;
  snapshotWindowMinutes: string;
}

export function emptySnapshotFields(): SnapshotFields {
  return { snapshotEnabled: false, snapshotIntegrationId: '', snapshotGraphs: '', snapshotWindowMinutes: '60' };
}

export function snapshotFieldsOf(request: SnapshotRequest | undefined, enabled: boolean): SnapshotFields {
  if (!request) return emptySnapshotFields();
  return { snapshotEnabled: enabled, snapshotIntegrationId: request.integrationId ?? '', snapshotGraphs: (request.graphs ?? []).join('\n'), snapshotWindowMinutes: String(request.windowMinutes ?? 60) };
}

export function graphsOf(form: Pick<SnapshotFields, 'snapshotGraphs'>): string[] {
  return form.snapshotGraphs.split('\n').map((line) => line.trim()).filter(Boolean);
}

export function toSnapshotRequest(form: SnapshotFields): SnapshotRequest {
  const graphs = graphsOf(form);
  return {
    ...(form.snapshotIntegrationId ? { integrationId: form.snapshotIntegrationId } : {}),
    ...(graphs.length > 0 ? { graphs } : {}),
    windowMinutes: Number(form.snapshotWindowMinutes),
  };
}

/** The integration read: the field's, else the alert trigger's. */
export function snapshotIntegrationOf(form: Pick<RuleForm, 'snapshotIntegrationId' | 'trigger'>): string | undefined {
  return form.snapshotIntegrationId || (form.trigger.type === 'alert' ? form.trigger.integrationId : undefined);
}

export function snapshotErrors(form: RuleForm): FormErrors {
  const errors: FormErrors = {};
  if (!snapshotIntegrationOf(form)) errors.snapshotIntegrationId = 'choose the integration whose tool is read (the rule has no alert trigger to take it from)';
  const minutes = Number(form.snapshotWindowMinutes);
  if (!Number.isInteger(minutes) || minutes < 1 || minutes > 10_080) errors.snapshotWindowMinutes = 'a whole number of minutes, 1 to 10080 (a week)';
  return errors;
}
