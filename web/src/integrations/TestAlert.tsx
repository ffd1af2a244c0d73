import { useState, type FormEvent } from 'react';
import { Link } from 'react-router';
import type { Integration } from '../api/integration-types';
import { messageOf } from '../api/problem';
import type { Outcome } from '../api/types';
import { useRuleNames } from '../rules/queries';
import { OutcomeBadge } from '../ui/Badge';
import { Field } from '../ui/Field';
import { useSendTestAlert } from './queries';

/**
 * Sends an alert through the integration as if the tool had: recorded in its log and matched
 * against its rules, as a dry run unless the person asks the rules to act.
 */
export function TestAlert({ integration }: { integration: Integration }) {
  const [alarmName, setAlarmName] = useState('PitcrewTestAlert');
  const [hostName, setHostName] = useState('');
  const [act, setAct] = useState(false);
  const send = useSendTestAlert(integration.id);
  const names = useRuleNames();
  const submit = (event: FormEvent) => {
    event.preventDefault();
    send.mutate({ alarmName: alarmName.trim() || undefined, hostName: hostName.trim() || undefined, act });
  };
  const events = send.data?.alert.events ?? [];
  return (
    <section className="panel">
      <h2>Send a test alert</h2>
      <form onSubmit={submit} aria-label="send a test alert">
        <Field label="Alarm name" hint="Rules match it with their alarm name pattern.">
          <input value={alarmName} onChange={(event) => setAlarmName(event.target.value)} maxLength={500} />
        </Field>
        <Field label="Host" hint="The host the alert is about (optional).">
          <input value={hostName} onChange={(event) => setHostName(event.target.value)} maxLength={253} autoComplete="off" />
        </Field>
        <label className="checkbox">
          <input type="checkbox" checked={act} onChange={(event) => setAct(event.target.checked)} /> Let matching rules act (otherwise a dry run: recorded,
          nothing runs)
        </label>
        <div>
          <button type="submit" className="button" disabled={send.isPending}>
            {send.isPending ? 'Sending…' : 'Send test alert'}
          </button>
        </div>
      </form>
      <div aria-live="polite" className="test-outcome">
        {send.isError ? (
          <p className="banner banner-error" role="alert">
            <span>{messageOf(send.error)}</span>
          </p>
        ) : null}
        {send.isSuccess ? (
          events.length === 0 ? (
            <p className="banner banner-info" role="status">
              <span>
                <strong>Recorded.</strong> No rule of this integration matches it.
              </span>
            </p>
          ) : (
            <ul className="test-alert-events" aria-label="what the test alert did">
              {events.map((event) => (
                <li key={event.ruleId}>
                  <Link to={`/rules/${event.ruleId}`}>{names.data?.get(event.ruleId) ?? 'a rule'}</Link>: <OutcomeBadge outcome={event.outcome as Outcome} />
                  {event.reason ? <span className="muted"> {event.reason}</span> : null}
                  {event.ifActed ? <IfActed {...event.ifActed} /> : null}
                </li>
              ))}
            </ul>
          )
        ) : null}
      </div>
    </section>
  );
}

/** A dry run stops before the target is looked for: what acting would have done (no_target and why). */
function IfActed({ outcome, reason }: { outcome: string; reason: string | null }) {
  return (
    <div className="if-acted" data-if-acted={outcome}>
      Had it acted: <OutcomeBadge outcome={outcome as Outcome} />
      {reason ? <span className="muted"> {reason}</span> : null}
    </div>
  );
}
