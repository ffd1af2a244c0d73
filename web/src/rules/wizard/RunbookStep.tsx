import type { Flavour, Interpreter } from '../../api/types';
import { Field } from '../../ui/Field';
import { INTERPRETER_LABELS } from '../describe';
import { CliCredentialsField } from './CliCredentialsField';
import { ScriptEditor } from './ScriptEditor';
import type { StepProps } from './step';

const FLAVOURS: Array<{ value: Flavour; title: string; text: string }> = [
  { value: 'autofix', title: 'Autofix', text: 'Changes the host to fix the problem: restart, clean up, scale.' },
  { value: 'diagnostics', title: 'Diagnostics', text: 'Collects facts. Files written to $PITCREW_ARTIFACTS are kept with the execution.' },
];

export function RunbookStep(props: StepProps) {
  const { form, update, errors } = props;
  const cli = form.actionType === 'cli';
  return (
    <>
      {cli ? <CliCredentialsField {...props} /> : <FlavourField {...props} />}
      <div className="field-row">
        <Field label="Interpreter" error={errors.interpreter}>
          <select value={form.interpreter} onChange={(event) => update({ interpreter: event.target.value as Interpreter })}>
            {Object.entries(INTERPRETER_LABELS).map(([value, label]) => (
              <option key={value} value={value}>
                {label}
              </option>
            ))}
          </select>
        </Field>
        <Field label="Timeout (seconds)" error={errors.timeoutSeconds} hint={`Past it, the ${cli ? 'service' : 'agent'} kills the script's process group.`}>
          <input inputMode="numeric" value={form.timeoutSeconds} onChange={(event) => update({ timeoutSeconds: event.target.value })} />
        </Field>
      </div>
      <Field
        label="Script"
        error={errors.script}
        hint={
          <>
            The alert arrives as environment variables, never pasted into the script: <code>$HostName</code>, <code>$AlarmName</code>,{' '}
            <code>$Severity</code> and each <code>MetaData</code> key. <code>$PITCREW_EXECUTION_ID</code> and <code>$PITCREW_HOSTNAME</code> describe the run.
            {cli ? ' Names that would point a CLI elsewhere (AWS_*, OS_*, KUBE*…) are not taken from the alert.' : null}
          </>
        }
      >
        <ScriptEditor value={form.script} onChange={(script) => update({ script })} interpreter={form.interpreter} />
      </Field>
      <Field label="Notes for people (optional)" error={errors.notes} hint="What the runbook does and when a human should step in.">
        <textarea rows={3} value={form.notes} onChange={(event) => update({ notes: event.target.value })} />
      </Field>
    </>
  );
}

function FlavourField({ form, update }: StepProps) {
  return (
    <fieldset className="choices choices-inline">
      <legend>Kind of runbook</legend>
      {FLAVOURS.map((flavour) => (
        <label key={flavour.value} className={`choice${form.flavour === flavour.value ? ' choice-selected' : ''}`}>
          <input type="radio" name="flavour" checked={form.flavour === flavour.value} onChange={() => update({ flavour: flavour.value })} />
          <span>
            <strong>{flavour.title}</strong>
            <span className="choice-text">{flavour.text}</span>
          </span>
        </label>
      ))}
    </fieldset>
  );
}
