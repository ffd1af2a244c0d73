import type { TriggerType } from '../../api/types';
import { Field } from '../../ui/Field';
import { previewDraft } from './AlertPreview';
import { AlertTriggerFields } from './AlertTriggerFields';
import { sampleScriptFor } from './form';
import { ScheduleFields } from './ScheduleFields';
import type { StepProps } from './step';

const TRIGGERS = [
  { type: 'webhook', title: 'Webhook', text: 'A URL of its own that your monitoring tool, a script or a person calls with an HTTP POST.' },
  { type: 'alert', title: 'Monitoring alert', text: 'Alerts a connected monitoring tool sends (Alertmanager, Grafana, Monasca, Zabbix, Datadog, PagerDuty, CloudWatch…).' },
  { type: 'cron', title: 'Schedule', text: 'A cron schedule in a time zone of your choice; each run goes to one online host of the target’s tags.' },
] as const;

export function TriggerStep(props: StepProps) {
  const { form, update, errors } = props;
  const choose = (type: TriggerType) => {
    const script = sampleScriptFor(type, form.script);
    update({ trigger: { type }, ...(script === undefined ? {} : { script }) });
  };
  return (
    <>
      <Field label="Rule name" error={errors.name} hint="Shown in notifications and lists, so name the symptom it fixes: “disk full on web”.">
        <input value={form.name} onChange={(event) => update({ name: event.target.value })} autoFocus autoComplete="off" maxLength={200} />
      </Field>
      <fieldset className="choices" aria-describedby={errors.trigger ? 'trigger-error' : undefined}>
        <legend>What fires the rule</legend>
        {TRIGGERS.map((trigger) => (
          <label key={trigger.type} className={`choice${form.trigger.type === trigger.type ? ' choice-selected' : ''}`}>
            <input type="radio" name="trigger" checked={form.trigger.type === trigger.type} onChange={() => choose(trigger.type)} />
            <span>
              <strong>{trigger.title}</strong>
              <span className="choice-text">{trigger.text}</span>
            </span>
          </label>
        ))}
        {errors.trigger && form.trigger.type !== 'alert' ? (
          <p className="field-error" id="trigger-error">
            {errors.trigger}
          </p>
        ) : null}
      </fieldset>
      {form.trigger.type === 'alert' ? <AlertTriggerFields trigger={form.trigger} onChange={(trigger) => update({ trigger })} error={errors.trigger} rule={previewDraft(form)} /> : null}
      {form.trigger.type === 'cron' ? <ScheduleFields {...props} /> : null}
    </>
  );
}
