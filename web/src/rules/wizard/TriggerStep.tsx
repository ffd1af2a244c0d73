import { Field } from '../../ui/Field';
import { describeTrigger } from '../describe';
import type { StepProps } from './step';

const TRIGGERS = [
  { type: 'webhook', title: 'Webhook', text: 'A URL of its own that your monitoring tool, a script or a person calls with an HTTP POST.', available: true },
  { type: 'alert', title: 'Monitoring alert', text: 'Alarms imported from an integrated monitoring tool. Comes with the integrations release.', available: false },
  { type: 'cron', title: 'Schedule', text: 'A cron schedule, run on one healthy host of the target. Comes in a later release.', available: false },
] as const;

export function TriggerStep({ form, update, errors }: StepProps) {
  const keptTrigger = form.trigger.type !== 'webhook';
  return (
    <>
      <Field label="Rule name" error={errors.name} hint="Shown in notifications and lists, so name the symptom it fixes: “disk full on web”.">
        <input value={form.name} onChange={(event) => update({ name: event.target.value })} autoFocus autoComplete="off" maxLength={200} />
      </Field>
      <fieldset className="choices" aria-describedby={errors.trigger ? 'trigger-error' : undefined}>
        <legend>What fires the rule</legend>
        {keptTrigger ? (
          <label className="choice choice-selected">
            <input type="radio" checked readOnly />
            <span>
              <strong>{describeTrigger(form.trigger)}</strong>
              <span className="choice-text">This rule keeps its trigger; change it through the API (docs/rules.md).</span>
            </span>
          </label>
        ) : (
          TRIGGERS.map((trigger) => (
            <label key={trigger.type} className={`choice${form.trigger.type === trigger.type ? ' choice-selected' : ''}${trigger.available ? '' : ' choice-disabled'}`}>
              <input type="radio" name="trigger" checked={form.trigger.type === trigger.type} disabled={!trigger.available} onChange={() => update({ trigger: { type: 'webhook' } })} />
              <span>
                <strong>{trigger.title}</strong>
                <span className="choice-text">{trigger.text}</span>
              </span>
            </label>
          ))
        )}
        {errors.trigger ? <p className="field-error" id="trigger-error">{errors.trigger}</p> : null}
      </fieldset>
    </>
  );
}
