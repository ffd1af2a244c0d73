import { Field } from '../../ui/Field';
import { describeTrigger } from '../describe';
import { AlertTriggerFields } from './AlertTriggerFields';
import type { StepProps } from './step';

const TRIGGERS = [
  { type: 'webhook', title: 'Webhook', text: 'A URL of its own that your monitoring tool, a script or a person calls with an HTTP POST.', available: true },
  { type: 'alert', title: 'Monitoring alert', text: 'Alerts a connected monitoring tool sends (Alertmanager, Grafana, Monasca, Zabbix, Datadog, PagerDuty, CloudWatch…).', available: true },
  { type: 'cron', title: 'Schedule', text: 'A cron schedule, run on one online host of the target. Made through the API for now (docs/scheduler.md).', available: false },
] as const;

export function TriggerStep({ form, update, errors }: StepProps) {
  const keptTrigger = form.trigger.type === 'cron';
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
              <input type="radio" name="trigger" checked={form.trigger.type === trigger.type} disabled={!trigger.available} onChange={() => update({ trigger: { type: trigger.type } })} />
              <span>
                <strong>{trigger.title}</strong>
                <span className="choice-text">{trigger.text}</span>
              </span>
            </label>
          ))
        )}
        {errors.trigger && form.trigger.type !== 'alert' ? <p className="field-error" id="trigger-error">{errors.trigger}</p> : null}
      </fieldset>
      {form.trigger.type === 'alert' ? <AlertTriggerFields trigger={form.trigger} onChange={(trigger) => update({ trigger })} error={errors.trigger} /> : null}
    </>
  );
}
