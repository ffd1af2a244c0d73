import type { InfrastructureType, TargetPick } from '../../api/types';
import { PROVIDER_INFO, providerOfInfrastructure } from '../../credentials/providers';
import { Field } from '../../ui/Field';
import { LabelOptions } from '../../ui/Options';
import { INFRASTRUCTURE_LABELS } from '../describe';
import { HostFanOutFields } from './FanOutFields';
import { CLI_SAMPLE_SCRIPT, pickOf, sampleScriptFor, type RuleForm } from './form';
import { HostPicker } from './HostPicker';
import type { StepProps } from './step';
import { TagPicker } from './TagPicker';

const TARGETS: Array<{ type: RuleForm['targetType']; title: string; text: string }> = [
  { type: 'trigger_host', title: 'The host in the alert', text: 'The host named by the payload’s HostName, such as the machine whose disk is full.' },
  { type: 'specific_host', title: 'One specific host', text: 'Always the same host, whatever the alert names.' },
  { type: 'specific_tags', title: 'Hosts with tags', text: 'Every host carrying all the tags you pick, once each.' },
];

// A tick names no host: a schedule runs on a host or on tags chosen here (DESIGN.md §3: any one healthy machine of the cluster).
const SCHEDULE_TARGETS: typeof TARGETS = [
  { type: 'specific_host', title: 'One specific host', text: 'Every run on the same host.' },
  { type: 'specific_tags', title: 'Hosts with tags', text: 'By default each run goes to one online host of the tags, the one picked least recently, so the job survives the loss of any one of them.' },
];

const PICKS: Array<{ pick: TargetPick; title: string; text: string }> = [
  { pick: 'one', title: 'One online host', text: 'Each run on one host of the tags whose agent is connected, in turn (the default). None online: the run is recorded as no_target.' },
  { pick: 'all', title: 'Every host of the tags', text: 'Each run on all of them, as a fan-out.' },
];

export function TargetStep(props: StepProps) {
  const { form, update, errors } = props;
  const provider = providerOfInfrastructure(form.infrastructureType);
  // The infrastructure type leads: a cloud's offers its cloud action, and another cloud's credential no longer fits.
  const chooseInfrastructure = (type: InfrastructureType) => {
    if (type === form.infrastructureType) return;
    update({ infrastructureType: type, credentialId: '', ...(providerOfInfrastructure(type) || form.actionType !== 'cloud' ? {} : { actionType: 'script' as const }) });
  };
  // A script still at its sample becomes the CLI sample: what the run gets differs.
  const chooseCli = () => update({ actionType: 'cli', ...(sampleScriptFor(form.trigger.type, form.script) ? { script: CLI_SAMPLE_SCRIPT } : {}) });
  return (
    <>
      <Field label="Infrastructure type" error={errors.infrastructureType} hint="Where the target hosts run. A cloud offers its cloud action: start, stop, reboot or terminate instances.">
        <select value={form.infrastructureType} onChange={(event) => chooseInfrastructure(event.target.value as InfrastructureType)}>
          <LabelOptions labels={INFRASTRUCTURE_LABELS} />
        </select>
      </Field>
      <fieldset className="choices choices-inline" aria-describedby={errors.actionType ? 'action-type-error' : undefined}>
        <legend>What the rule does</legend>
        <label className={`choice${form.actionType === 'script' ? ' choice-selected' : ''}`}>
          <input type="radio" name="actionType" checked={form.actionType === 'script'} onChange={() => update({ actionType: 'script' })} />
          <span>
            <strong>Runbook on hosts</strong>
            <span className="choice-text">A script on the target hosts, run by their agents.</span>
          </span>
        </label>
        {provider ? (
          <label className={`choice${form.actionType === 'cloud' ? ' choice-selected' : ''}`}>
            <input type="radio" name="actionType" checked={form.actionType === 'cloud'} onChange={() => update({ actionType: 'cloud' })} />
            <span>
              <strong>Cloud action</strong>
              <span className="choice-text">
                Start, stop, reboot or terminate {PROVIDER_INFO[provider].instances} through the {PROVIDER_INFO[provider].title} API, with a stored credential. No
                agent needed.
              </span>
            </span>
          </label>
        ) : null}
        <label className={`choice${form.actionType === 'cli' ? ' choice-selected' : ''}`}>
          <input type="radio" name="actionType" checked={form.actionType === 'cli'} onChange={chooseCli} />
          <span>
            <strong>CLI runbook</strong>
            <span className="choice-text">A script of cloud CLIs (aws, az, gcloud, openstack, kubectl) run by the service itself, the CLI Machine, with stored credentials. No agent needed.</span>
          </span>
        </label>
        <label className={`choice${form.actionType === 'graph_snapshot' ? ' choice-selected' : ''}`}>
          <input type="radio" name="actionType" checked={form.actionType === 'graph_snapshot'} onChange={() => update({ actionType: 'graph_snapshot' })} />
          <span>
            <strong>Graph snapshot</strong>
            <span className="choice-text">The alerting metric's graph, read from the monitoring tool by the service and kept with the execution. No agent needed.</span>
          </span>
        </label>
        {errors.actionType ? (
          <p className="field-error" id="action-type-error">
            {errors.actionType}
          </p>
        ) : null}
      </fieldset>
      {form.actionType === 'cloud' ? (
        <p className="field-hint">A cloud action acts on the instances you choose in the next step (named by the alert, or a fixed list): it needs no host target.</p>
      ) : form.actionType === 'graph_snapshot' ? (
        <p className="field-hint">A graph snapshot is taken once per alert by the service, of the alert's metric: it needs no host target.</p>
      ) : form.actionType === 'cli' ? (
        <p className="field-hint">A CLI runbook runs once per alert on the service side, in a clean environment with the credentials you pick next: it needs no host target.</p>
      ) : (
        <HostTarget {...props} />
      )}
    </>
  );
}

function HostTarget({ form, update, errors }: StepProps) {
  const scheduled = form.trigger.type === 'cron';
  const pick = pickOf(form);
  return (
    <>
      <fieldset className="choices">
        <legend>Where the runbook runs</legend>
        {scheduled ? <p className="field-hint">A tick carries no host name: each run goes to the host or the tags chosen here.</p> : null}
        {(scheduled ? SCHEDULE_TARGETS : TARGETS).map((target) => (
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
          <TagPicker
            tags={form.tags}
            onChange={(tags) => update({ tags })}
            error={errors.tags}
            hint={pick === 'one' ? 'The hosts carrying all of these tags; each run goes to one of them that is online.' : undefined}
          />
          {scheduled ? (
            <fieldset className="choices choices-inline">
              <legend>Each run goes to</legend>
              {PICKS.map((choice) => (
                <label key={choice.pick} className={`choice${pick === choice.pick ? ' choice-selected' : ''}`}>
                  <input type="radio" name="pick" checked={pick === choice.pick} onChange={() => update({ pick: choice.pick })} />
                  <span>
                    <strong>{choice.title}</strong>
                    <span className="choice-text">{choice.text}</span>
                  </span>
                </label>
              ))}
              {errors.pick ? <p className="field-error">{errors.pick}</p> : null}
            </fieldset>
          ) : null}
          {pick === 'all' ? <HostFanOutFields form={form} update={update} errors={errors} /> : null}
        </>
      ) : null}
    </>
  );
}
