import type { InfrastructureType } from '../../api/types';
import { Field } from '../../ui/Field';
import { INFRASTRUCTURE_LABELS } from '../describe';
import { FanOutFields } from './FanOutFields';
import type { RuleForm } from './form';
import { HostPicker } from './HostPicker';
import type { StepProps } from './step';
import { TagPicker } from './TagPicker';

const TARGETS: Array<{ type: RuleForm['targetType']; title: string; text: string }> = [
  { type: 'trigger_host', title: 'The host in the alert', text: 'The host named by the payload’s HostName, such as the machine whose disk is full.' },
  { type: 'specific_host', title: 'One specific host', text: 'Always the same host, whatever the alert names.' },
  { type: 'specific_tags', title: 'Hosts with tags', text: 'Every host carrying all the tags you pick, once each.' },
];

export function TargetStep({ form, update, errors }: StepProps) {
  return (
    <>
      <Field label="Infrastructure type" error={errors.infrastructureType} hint="Where the target hosts run.">
        <select value={form.infrastructureType} onChange={(event) => update({ infrastructureType: event.target.value as InfrastructureType })}>
          {Object.entries(INFRASTRUCTURE_LABELS).map(([value, label]) => (
            <option key={value} value={value}>
              {label}
            </option>
          ))}
        </select>
      </Field>
      <fieldset className="choices">
        <legend>Where the runbook runs</legend>
        {TARGETS.map((target) => (
          <label key={target.type} className={`choice${form.targetType === target.type ? ' choice-selected' : ''}`}>
            <input type="radio" name="target" checked={form.targetType === target.type} onChange={() => update({ targetType: target.type })} />
            <span>
              <strong>{target.title}</strong>
              <span className="choice-text">{target.text}</span>
            </span>
          </label>
        ))}
        {errors.targetType ? <p className="field-error">{errors.targetType}</p> : null}
      </fieldset>
      {form.targetType === 'specific_host' ? <HostPicker hostname={form.hostname} onChange={(hostname) => update({ hostname })} error={errors.hostname} /> : null}
      {form.targetType === 'specific_tags' ? (
        <>
          <TagPicker tags={form.tags} onChange={(tags) => update({ tags })} error={errors.tags} />
          <FanOutFields form={form} update={update} errors={errors} />
        </>
      ) : null}
    </>
  );
}
