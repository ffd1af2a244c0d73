import type { CloudOperation } from '../../api/types';
import { PROVIDER_INFO, providerOfInfrastructure } from '../../credentials/providers';
import { useCredentials } from '../../credentials/queries';
import { Field } from '../../ui/Field';
import { LastTest } from '../../ui/LastTest';
import { INFRASTRUCTURE_LABELS } from '../describe';
import { FanOutFields } from './FanOutFields';
import { ListPicker } from './ListPicker';
import type { StepProps } from './step';

const OPERATIONS: Array<{ value: CloudOperation; title: string; text: string }> = [
  { value: 'start', title: 'Start', text: 'Start a stopped instance; done once it is running.' },
  { value: 'stop', title: 'Stop', text: 'Stop a running instance; done once it is stopped.' },
  { value: 'reboot', title: 'Reboot', text: 'Reboot a running instance; done once it runs again.' },
  { value: 'terminate', title: 'Terminate', text: 'Destroy the instance and its local disks. It cannot be undone.' },
];

const REGION_HINTS = {
  aws: 'The AWS region of the instances, e.g. eu-west-1.',
  azure: 'Not needed: a VM is named by its resource group (or its resource id).',
  gcp: 'The zone of instances named without one, e.g. europe-west1-b (optional).',
  openstack: "The region of the servers (optional: the credential's, or the only one).",
};

/** The cloud action: what to do, where, with which credential, to which instances. The provider is the infrastructure type's. */
export function CloudActionStep({ form, update, errors }: StepProps) {
  const provider = providerOfInfrastructure(form.infrastructureType) ?? 'aws';
  const info = PROVIDER_INFO[provider];
  return (
    <>
      <p className="step-intro">
        {info.title} {info.instances}, from the infrastructure type {INFRASTRUCTURE_LABELS[form.infrastructureType]} (change it on the previous step). The
        service makes the call itself and waits for the state asked for: one execution per instance.
      </p>
      <fieldset className="choices choices-inline" aria-describedby={errors.operation ? 'operation-error' : undefined}>
        <legend>Operation</legend>
        {OPERATIONS.map((operation) => (
          <label key={operation.value} className={`choice${form.operation === operation.value ? ' choice-selected' : ''}`}>
            <input type="radio" name="operation" checked={form.operation === operation.value} onChange={() => update({ operation: operation.value })} />
            <span>
              <strong>{operation.title}</strong>
              <span className="choice-text">{operation.text}</span>
            </span>
          </label>
        ))}
        {errors.operation ? (
          <p className="field-error" id="operation-error">
            {errors.operation}
          </p>
        ) : null}
      </fieldset>
      {form.operation === 'terminate' ? <ConfirmTerminate form={form} update={update} errors={errors} /> : null}
      <div className="field-row">
        <Field label={provider === 'gcp' ? 'Zone' : 'Region'} error={errors.region} hint={REGION_HINTS[provider]}>
          <input value={form.region} onChange={(event) => update({ region: event.target.value })} placeholder={provider === 'aws' ? 'eu-west-1' : ''} autoComplete="off" spellCheck={false} />
        </Field>
        <Field label="Wait for the state (seconds)" error={errors.timeoutSeconds} hint="10 to 3600. Past it, the execution fails and says which state the instance reached.">
          <input inputMode="numeric" value={form.timeoutSeconds} onChange={(event) => update({ timeoutSeconds: event.target.value })} />
        </Field>
      </div>
      <CredentialPicker form={form} update={update} errors={errors} />
      <InstancesFields form={form} update={update} errors={errors} />
      {form.instancesFrom === 'payload' ? null : (
        <FanOutFields
          what="instances"
          atOnce={{ value: form.instancesAtOnce, error: errors.instancesAtOnce, onChange: (instancesAtOnce) => update({ instancesAtOnce }) }}
          failed={{ value: form.failedInstances, error: errors.failedInstances, onChange: (failedInstances) => update({ failedInstances }) }}
        />
      )}
    </>
  );
}

function ConfirmTerminate({ form, update, errors }: StepProps) {
  return (
    <div className={`terminate-warning${errors.confirmTerminate ? ' field-invalid' : ''}`}>
      <p className="banner banner-error" role="note">
        <span>
          <strong>Terminate destroys each instance the rule names</strong>, with its local disks (and any volume set to be deleted on termination). It cannot
          be undone, and an alert that names the wrong instance destroys that one.
        </span>
      </p>
      <label className="checkbox">
        <input
          type="checkbox"
          checked={form.confirmTerminate}
          onChange={(event) => update({ confirmTerminate: event.target.checked })}
          aria-invalid={errors.confirmTerminate ? true : undefined}
          aria-describedby={errors.confirmTerminate ? 'confirm-terminate-error' : undefined}
        />
        I understand: terminate the instances this rule names, for good
      </label>
      {errors.confirmTerminate ? (
        <p className="field-error" id="confirm-terminate-error" role="alert">
          {errors.confirmTerminate}
        </p>
      ) : null}
    </div>
  );
}

/** The tenant's credentials of the provider; a new one is stored on the Credentials page, in a new tab, so the wizard keeps its state. */
function CredentialPicker({ form, update, errors }: StepProps) {
  const provider = providerOfInfrastructure(form.infrastructureType) ?? 'aws';
  const credentials = useCredentials();
  const fitting = (credentials.data?.items ?? []).filter((credential) => credential.provider === provider);
  const chosen = fitting.find((credential) => credential.id === form.credentialId);
  const title = PROVIDER_INFO[provider].title;
  const lastTest = chosen ? (
    <>
      {' '}
      Last test: <LastTest test={chosen.lastTest} />
    </>
  ) : null;
  return (
    <ListPicker label="Credential" what="credentials" list={credentials} items={fitting} value={form.credentialId} choose={`Choose ${/^[AEIOU]/.test(title) ? 'an' : 'a'} ${title} credential`}
      none={`No ${title} credential is stored yet. `} make={{ to: `/credentials?provider=${provider}`, label: `Store a new ${title} credential` }} more={lastTest}
      error={errors.credentialId} onChange={(credentialId) => update({ credentialId })} />
  );
}

function InstancesFields({ form, update, errors }: StepProps) {
  const provider = providerOfInfrastructure(form.infrastructureType) ?? 'aws';
  const info = PROVIDER_INFO[provider];
  return (
    <fieldset className="choices" aria-describedby={errors.instancesFrom ? 'instances-error' : undefined}>
      <legend>Which instances</legend>
      <label className={`choice${form.instancesFrom === 'payload' ? ' choice-selected' : ''}`}>
        <input type="radio" name="instancesFrom" checked={form.instancesFrom === 'payload'} onChange={() => update({ instancesFrom: 'payload' })} />
        <span>
          <strong>The instance named by the alert</strong>
          <span className="choice-text">Its id in a payload field or a MetaData key. An event that names none is recorded as no_target; the provider is not called.</span>
        </span>
      </label>
      {form.instancesFrom === 'payload' ? (
        <Field label="Payload field" error={errors.instanceField} hint={`The field that holds the ${info.instance} id${provider === 'aws' ? ' (i-0abc…)' : ''}.`}>
          <input className="mono" value={form.instanceField} onChange={(event) => update({ instanceField: event.target.value })} maxLength={200} autoComplete="off" spellCheck={false} />
        </Field>
      ) : null}
      <label className={`choice${form.instancesFrom === 'ids' ? ' choice-selected' : ''}`}>
        <input type="radio" name="instancesFrom" checked={form.instancesFrom === 'ids'} onChange={() => update({ instancesFrom: 'ids' })} />
        <span>
          <strong>A fixed list</strong>
          <span className="choice-text">These instances every time, one execution each, whatever the alert names.</span>
        </span>
      </label>
      {form.instancesFrom === 'ids' ? (
        <Field label="Instance ids" error={errors.instanceIds} hint="One a line (or separated by spaces or commas), at most 100.">
          <textarea className="mono" rows={3} value={form.instanceIds} onChange={(event) => update({ instanceIds: event.target.value })} placeholder={provider === 'aws' ? 'i-0123456789abcdef0' : ''} spellCheck={false} />
        </Field>
      ) : null}
      <label className={`choice${form.instancesFrom === 'tags' ? ' choice-selected' : ''}`}>
        <input type="radio" name="instancesFrom" checked={form.instancesFrom === 'tags'} onChange={() => update({ instancesFrom: 'tags' })} />
        <span>
          <strong>The instances carrying these tags</strong>
          <span className="choice-text">
            Found at {info.title} when the action runs (an instance tagged since is included), then one execution each, each within the action limit. A filter that
            matches none fails; one that matches over 500 calls nothing.
          </span>
        </span>
      </label>
      {form.instancesFrom === 'tags' ? (
        <Field label={provider === 'openstack' ? 'Server metadata' : provider === 'gcp' ? 'Labels' : 'Tags'} error={errors.instanceTags} hint="name=value, one a line, at most 10: an instance must carry every one.">
          <textarea className="mono" rows={3} value={form.instanceTags} onChange={(event) => update({ instanceTags: event.target.value })} placeholder={'env=prod\nrole=web'} spellCheck={false} />
        </Field>
      ) : null}
      {errors.instancesFrom ? (
        <p className="field-error" id="instances-error">
          {errors.instancesFrom}
        </p>
      ) : null}
    </fieldset>
  );
}
