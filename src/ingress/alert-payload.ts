import type { SkippedEnv } from '../ingest/alert.js';
import type { AlertPayload } from '../ingest/alert.js';
import type { ToolAlert } from '../integrations/notification.js';
import { alertVariable } from '../runbooks/library/alert-labels.js';
import { parseAlertPayload, type ParseResult } from './payload.js';

/**
 * What a runbook receives of a monitoring tool's alert (docs/integrations.md, "Environment"):
 * `AlarmName`, `HostName`, `Severity`, `Source` (the tool), `State` (firing or resolved), each label
 * as `LABEL_<name>` and each annotation as `ANNOTATION_<name>`, any character of the name that a
 * shell variable cannot hold written as `_`. The prefixes keep labels from colliding with the fixed
 * names or taking reserved ones (`PATH`); two labels that come to the same name keep the first, and
 * the reply says which was left out. Values reach the script as environment only.
 */
export function alertPayloadOf(source: string, alert: ToolAlert): ParseResult {
  const metaData: Record<string, string> = {};
  const collided: SkippedEnv[] = [];
  const put = (prefix: 'LABEL_' | 'ANNOTATION_', name: string, value: string) => {
    const variable = alertVariable(prefix, name);
    if (Object.hasOwn(metaData, variable)) collided.push({ name: prefix + name, reason: `its variable name ${variable} is taken by another name of this alert that reads the same` });
    else metaData[variable] = value;
  };
  for (const [name, value] of Object.entries(alert.labels)) put('LABEL_', name, value);
  for (const [name, value] of Object.entries(alert.annotations)) put('ANNOTATION_', name, value);
  // Built key by key: on Node 20 a spread followed by a new key (`{ ...known, MetaData }`) takes V8's slow path.
  const body: Record<string, unknown> = {};
  if (alert.alarmName !== undefined) body.AlarmName = alert.alarmName;
  if (alert.hostName !== undefined) body.HostName = alert.hostName;
  if (alert.severity !== undefined) body.Severity = alert.severity;
  body.Source = source;
  body.State = alert.state;
  body.MetaData = metaData;
  const parsed = parseAlertPayload(body);
  if (!parsed.ok) return parsed;
  const payload: AlertPayload = { ...parsed.payload, raw: alert.raw, alarmState: alert.state, skippedEnv: [...parsed.payload.skippedEnv, ...collided] };
  return { ok: true, payload };
}
