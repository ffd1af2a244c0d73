import { useMemo } from 'react';
import type { TriggerMatch } from '../../api/integration-types';
import type { RuleInput } from '../../api/types';
import { messageOf } from '../../api/problem';
import { useTriggerPreview } from '../../integrations/queries';
import { Time } from '../../ui/Time';
import { useDebounced } from '../../ui/useDebounced';

const SHOWN = 10;

/** Which of the integration's recent alerts this trigger would have matched, as it is being written. */
export function AlertPreview({ trigger }: { trigger: RuleInput['trigger'] }) {
  const { alarmName, severity, labels, on, hostLabel } = trigger;
  // Debounced as text: a new object each render would never settle.
  const settled = useDebounced(JSON.stringify({ alarmName, severity, labels, on, hostLabel }), 300);
  const match = useMemo(() => JSON.parse(settled) as TriggerMatch, [settled]);
  const preview = useTriggerPreview(trigger.integrationId, match);
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
            <strong>{preview.data.matched}</strong> of the last {preview.data.scanned} alerts match
            {preview.data.matched > 0 ? `; ${preview.data.items.filter((item) => item.acts).length} would have acted` : ''}.
          </p>
          <table className="table">
            <thead>
              <tr>
                <th>Received</th>
                <th>Alert</th>
                <th>State</th>
                <th>Would</th>
                <th>Host</th>
              </tr>
            </thead>
            <tbody>
              {preview.data.items.slice(0, SHOWN).map(({ alert, matches, acts, hostName }) => (
                <tr key={alert.id} className={matches ? undefined : 'row-off'} data-matches={matches}>
                  <td>
                    <Time iso={alert.receivedAt} />
                  </td>
                  <td>{alert.alarmName ?? ''}</td>
                  <td>{alert.state}</td>
                  <td>{!matches ? 'not match' : acts ? 'act' : 'record only'}</td>
                  <td>{hostName ?? (matches ? 'none named' : '')}</td>
                </tr>
              ))}
            </tbody>
          </table>
        </>
      )}
    </section>
  );
}
