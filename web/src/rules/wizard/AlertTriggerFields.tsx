import { useState } from 'react';
import { Link } from 'react-router';
import type { AlertOn, RuleInput } from '../../api/types';
import { useIntegrations } from '../../integrations/queries';
import { TOOLS } from '../../integrations/tools';
import { Field } from '../../ui/Field';
import { AlertPreview, type DraftRule } from './AlertPreview';

type AlertTrigger = RuleInput['trigger'];

/** An alert trigger: the integration, what alerts match, which states act, and the host label; the preview decides with the `rule` written so far. */
export function AlertTriggerFields({ trigger, onChange, error, rule }: { trigger: AlertTrigger; onChange: (trigger: AlertTrigger) => void; error?: string; rule?: DraftRule }) {
  const integrations = useIntegrations();
  // Text as typed: a half-written label line must not be parsed away.
  const [severity, setSeverity] = useState((trigger.severity ?? []).join(', '));
  const [labels, setLabels] = useState(Object.entries(trigger.labels ?? {}).map(([name, value]) => `${name}=${value}`).join('\n'));
  const set = (patch: Partial<AlertTrigger>) => onChange(withoutEmpty({ ...trigger, ...patch }));
  const items = integrations.data?.items ?? [];
  return (
    <div className="alert-trigger">
      <Field label="Integration" error={error} hint={items.length === 0 && integrations.isSuccess ? undefined : 'The monitoring tool whose alerts raise this rule.'}>
        <select value={trigger.integrationId ?? ''} onChange={(event) => set({ integrationId: event.target.value || undefined })}>
          <option value="">Choose an integration…</option>
          {items.map((integration) => (
            <option key={integration.id} value={integration.id}>
              {integration.name} ({TOOLS[integration.type].title})
            </option>
          ))}
        </select>
      </Field>
      {integrations.isSuccess && items.length === 0 ? (
        <p className="field-hint">
          No monitoring tool is connected yet: <Link to="/integrations">connect one</Link> first.
        </p>
      ) : null}
      <Field label="Alarm name" hint='A glob ("Disk*", ? for one character) or a regular expression between slashes ("/^disk_(full|low)$/"). Empty: every alert.'>
        <input value={trigger.alarmName ?? ''} onChange={(event) => set({ alarmName: event.target.value || undefined })} maxLength={500} autoComplete="off" />
      </Field>
      <Field label="Severities" hint="Comma-separated, compared without case (critical, warning). Empty: any.">
        <input
          value={severity}
          onChange={(event) => {
            setSeverity(event.target.value);
            const list = [...new Set(event.target.value.split(',').map((s) => s.trim()).filter(Boolean))];
            set({ severity: list.length > 0 ? list : undefined });
          }}
          autoComplete="off"
        />
      </Field>
      <Field label="Labels" hint="One name=value per line; the value is a glob (env=prod, team=db-*). The alert must carry them all.">
        <textarea
          rows={3}
          className="mono"
          value={labels}
          onChange={(event) => {
            setLabels(event.target.value);
            set({ labels: parseLabels(event.target.value) });
          }}
        />
      </Field>
      <Field label="Act on" hint="The alerts in the other states are recorded on the rule, and run nothing.">
        <select value={trigger.on ?? 'firing'} onChange={(event) => set({ on: event.target.value as AlertOn })}>
          <option value="firing">firing alerts (default)</option>
          <option value="resolved">resolved alerts</option>
          <option value="both">both</option>
        </select>
      </Field>
      <Field label="Host label" hint="The label that names the host to act on, if not the tool's own (Alertmanager instance, Monasca hostname).">
        <input value={trigger.hostLabel ?? ''} onChange={(event) => set({ hostLabel: event.target.value.trim() || undefined })} maxLength={200} autoComplete="off" />
      </Field>
      <AlertPreview trigger={trigger} draft={rule?.draft} complete={rule?.complete} />
    </div>
  );
}

function parseLabels(text: string): Record<string, string> | undefined {
  const entries = text
    .split('\n')
    .map((line) => line.trim())
    .filter((line) => line.includes('='))
    .map((line) => [line.slice(0, line.indexOf('=')).trim(), line.slice(line.indexOf('=') + 1).trim()] as const)
    .filter(([name]) => name !== '');
  return entries.length > 0 ? Object.fromEntries(entries) : undefined;
}

/** Fields left empty are not sent: absent means "any". */
function withoutEmpty(trigger: AlertTrigger): AlertTrigger {
  return Object.fromEntries(Object.entries(trigger).filter(([, value]) => value !== undefined)) as AlertTrigger;
}
