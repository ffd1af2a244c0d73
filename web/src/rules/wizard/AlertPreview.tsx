import { useMemo } from 'react';
import type { PreviewDraft, TriggerMatch, TriggerPreview } from '../../api/integration-types';
import type { Outcome, RuleInput } from '../../api/types';
import { messageOf } from '../../api/problem';
import { useTriggerPreview } from '../../integrations/queries';
import { OutcomeBadge } from '../../ui/Badge';
import { TableScroll } from '../../ui/TableScroll';
import { Time } from '../../ui/Time';
import { useDebounced } from '../../ui/useDebounced';
import { stepErrors, toRuleInput, type RuleForm } from './form';

const SHOWN = 10;

/** What the preview decides with; complete: the target and the action are both the form's. */
export interface DraftRule {
  draft: PreviewDraft;
  complete: boolean;
}

/**
 * The target and action the rule has so far, once the wizard's own checks pass them: the service
 * decides each alert with them as its ingest would (no host: no_target). Unfinished, the service's
 * start is used: a script on the host the alert names.
 */
export function previewDraft(form: RuleForm): DraftRule {
  if (Object.keys(stepErrors('target', form)).length > 0) return { draft: {}, complete: false };
  const { target, action, infrastructureType } = toRuleInput(form);
  if (Object.keys(stepErrors('action', form)).length > 0) return { draft: { target, infrastructureType }, complete: false };
  return { draft: { target, action, infrastructureType }, complete: true };
}

/** Which of the integration's recent alerts this trigger would have matched, and what each would do now, as it is being written. */
export function AlertPreview({ trigger, draft = {}, complete = true }: { trigger: RuleInput['trigger']; draft?: PreviewDraft; complete?: boolean }) {
  const { alarmName, severity, labels, on, hostLabel } = trigger;
  // Debounced as text: a new object each render would never settle.
  const settled = useDebounced(JSON.stringify({ alarmName, severity, labels, on, hostLabel, ...draft }), 300);
  const body = useMemo(() => JSON.parse(settled) as TriggerMatch & PreviewDraft, [settled]);
  const preview = useTriggerPreview(trigger.integrationId, body);
  if (!trigger.integrationId) return null;
  return (
    <section className="preview" aria-label="alert preview" aria-live="polite">
      <h3>Recent alerts it would have matched</h3>
      {preview.isError ? (
        <p className="field-error">{messageOf(preview.error)}</p>
      ) : !preview.data ? (
        <p className="muted">Looking at the recent alerts…</p>
      ) : preview.data.scanned === 0 ? (
        <p className="muted">This integration has not received an alert yet: send a test alert from its page to see the match here.</p>
      ) : (
        <>
          <p data-preview-count>
            <strong>{preview.data.matched}</strong> of the last {preview.data.scanned} alerts match{summary(preview.data)}.
            {complete ? null : <span className="muted"> Until the target and runbook steps are done, as a script on the host the alert names.</span>}
          </p>
          <TableScroll>
            <table className="table">
              <thead>
                <tr>
                  <th>Received</th>
                  <th>Alert</th>
                  <th>State</th>
                  <th className="col-wide">Would</th>
                  <th>Host</th>
                </tr>
              </thead>
              <tbody>
                {preview.data.items.slice(0, SHOWN).map((item) => (
                  <tr key={item.alert.id} className={item.matches ? undefined : 'row-off'} data-matches={item.matches} data-outcome={item.outcome ?? undefined}>
                    <td>
                      <Time iso={item.alert.receivedAt} />
                    </td>
                    <td>{item.alert.alarmName ?? ''}</td>
                    <td>{item.alert.state}</td>
                    <td className="cell-reason">
                      <Would item={item} />
                    </td>
                    <td>{item.hostName ?? (item.matches ? 'none named' : '')}</td>
                  </tr>
                ))}
              </tbody>
            </table>
          </TableScroll>
        </>
      )}
    </section>
  );
}

type Item = TriggerPreview['items'][number];

/** What the ingest would do with the alert: act (where), record it only, or its outcome and reason (no_target). */
function Would({ item }: { item: Item }) {
  if (!item.matches || item.outcome === null) return <>not match</>;
  if (item.outcome === 'recorded') return <span title={item.reason ?? undefined}>record only</span>;
  if (item.outcome === 'accepted') {
    const more = item.targetCount > item.targets.length ? `, … (${item.targetCount})` : '';
    return <>act{item.targets.length > 0 ? ` on ${item.targets.join(', ')}${more}` : ''}</>;
  }
  return (
    <>
      <OutcomeBadge outcome={item.outcome as Outcome} /> {item.reason}
    </>
  );
}

function summary(preview: TriggerPreview): string {
  if (preview.matched === 0) return '';
  const count = (outcome: string) => preview.items.filter((item) => item.outcome === outcome).length;
  const nowhere = count('no_target');
  return `; ${count('accepted')} would act${nowhere > 0 ? `, ${nowhere} would find no target` : ''}`;
}
