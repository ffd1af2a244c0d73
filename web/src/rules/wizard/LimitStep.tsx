import { Field } from '../../ui/Field';
import { NumberField } from '../../ui/NumberField';
import { limitUnitOf } from '../describe';
import type { StepProps } from './step';

export function LimitStep({ form, update, errors }: StepProps) {
  const off = !form.limitEnabled;
  const byService = form.actionType !== 'script';
  const per = limitUnitOf(form.actionType);
  return (
    <>
      {form.actionType === 'cloud' ? (
        <p className="step-intro">
          An alert storm should not call the cloud again and again for the same instance. The limit counts calls per instance; other instances keep
          their own count. Events past the limit are recorded with outcome <code>limited</code>, and the provider is not called.
        </p>
      ) : form.actionType === 'cli' ? (
        <p className="step-intro">
          An alert storm should not run the CLI runbook again and again for the same host. The limit counts runs per host the alert names; other
          hosts keep their own count. Events past the limit are recorded with outcome <code>limited</code>, and the runbook does not run.
        </p>
      ) : (
        <p className="step-intro">
          A runbook that has run several times on the same host without fixing it should stop and call a person. The limit counts runs per host;
          other hosts keep their own count. Events past the limit are recorded with outcome <code>limited</code>; with escalation, a person is
          told once per host and window, and the rule's page lists the escalation.
        </p>
      )}
      <fieldset className="choices choices-inline">
        <legend>Action limit</legend>
        <label className={`choice${off ? ' choice-selected' : ''}`}>
          <input type="radio" name="limit" checked={off} onChange={() => update({ limitEnabled: false })} />
          <span>
            <strong>No limit</strong>
            <span className="choice-text">Run every time the rule fires.</span>
          </span>
        </label>
        <label className={`choice${off ? '' : ' choice-selected'}`}>
          <input type="radio" name="limit" checked={!off} onChange={() => update({ limitEnabled: true })} />
          <span>
            <strong>Limit runs per {per}</strong>
            <span className="choice-text">At most N runs on one {per} within a window.</span>
          </span>
        </label>
      </fieldset>
      {off ? null : (
        <div className="field-row">
          <NumberField label="Runs allowed" error={errors.limitMax} hint={`per ${per}`} value={form.limitMax} onChange={(limitMax) => update({ limitMax })} />
          <NumberField label="Per window (seconds)" error={errors.limitWindowSeconds} hint="a sliding window" value={form.limitWindowSeconds} onChange={(limitWindowSeconds) => update({ limitWindowSeconds })} />
          {byService ? null : (
            <Field label="Then" error={errors.onLimit}>
              <select value={form.onLimit} onChange={(event) => update({ onLimit: event.target.value as 'escalate' | 'drop' })}>
                <option value="escalate">escalate to a human</option>
                <option value="drop">record and do nothing</option>
              </select>
            </Field>
          )}
        </div>
      )}
    </>
  );
}
