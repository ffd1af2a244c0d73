import type { Flavour } from '../../api/types';
import { Field } from '../../ui/Field';
import { RadioChoices, type Choice } from '../../ui/RadioChoices';
import { CliCredentialsField } from './CliCredentialsField';
import { InterpreterField } from './InterpreterField';
import { RepositoryFileFields } from './RepositoryFileFields';
import type { RunbookSource } from './runbook-form';
import { ScriptEditor } from './ScriptEditor';
import type { StepProps } from './step';
import { StoredRunbookFields, VersionChoice } from './StoredRunbookFields';

const FLAVOURS: Array<{ value: Flavour; title: string; text: string }> = [
  { value: 'autofix', title: 'Autofix', text: 'Changes the host to fix the problem: restart, clean up, scale.' },
  { value: 'diagnostics', title: 'Diagnostics', text: 'Collects facts. Files written to $PITCREW_ARTIFACTS are kept with the execution.' },
];

const SOURCES: ReadonlyArray<Choice<RunbookSource>> = [
  { value: 'inline', title: 'Write the script here', text: 'Kept in this rule only.' },
  { value: 'stored', title: 'A stored runbook', text: 'One of the tenant’s runbooks, by name: its latest version, or one you pin.' },
  { value: 'new', title: 'Save what I write as a new runbook', text: 'Stored as a runbook when you create the rule, which then runs it; other rules can too.' },
  { value: 'git', title: 'A file in a git repository', text: 'Fetched, read-only, from one of your repositories before each run.' },
];

export function RunbookStep(props: StepProps) {
  const { form, update, errors } = props;
  const cli = form.actionType === 'cli';
  return (
    <>
      {cli ? <CliCredentialsField {...props} /> : <FlavourField {...props} />}
      <RadioChoices legend="The runbook" layout="choices-inline" choices={SOURCES} value={form.runbookSource} onChange={(runbookSource) => update({ runbookSource })} error={errors.runbookSource} />
      {form.runbookSource === 'stored' ? <StoredRunbookFields {...props} /> : null}
      {form.runbookSource === 'git' ? <RepositoryFileFields {...props} /> : null}
      {form.runbookSource === 'new' ? (
        <Field label="Name of the new runbook" error={errors.newRunbookName} hint="Unique in the tenant; the Runbooks page lists it with its versions.">
          <input value={form.newRunbookName} onChange={(event) => update({ newRunbookName: event.target.value })} maxLength={200} autoComplete="off" />
        </Field>
      ) : null}
      <div className="field-row">
        {form.runbookSource === 'inline' || form.runbookSource === 'new' ? <InterpreterField value={form.interpreter} onChange={(interpreter) => update({ interpreter })} error={errors.interpreter} /> : null}
        <Field label="Timeout (seconds)" error={errors.timeoutSeconds} hint={`Past it, the ${cli ? 'service' : 'agent'} kills the script's process group.`}>
          <input inputMode="numeric" value={form.timeoutSeconds} onChange={(event) => update({ timeoutSeconds: event.target.value })} />
        </Field>
      </div>
      {form.runbookSource === 'inline' || form.runbookSource === 'new' ? <WrittenRunbookFields {...props} /> : null}
      {form.runbookSource === 'new' ? <VersionChoice {...props} latest={1} /> : null}
    </>
  );
}

/** The script and notes written in the wizard: kept in the rule, or stored as a new runbook. */
function WrittenRunbookFields({ form, update, errors }: StepProps) {
  const cli = form.actionType === 'cli';
  return (
    <>
      <Field
        label="Script"
        error={errors.script}
        hint={
          <>
            The alert arrives as environment variables, never pasted into the script: <code>$HostName</code>, <code>$AlarmName</code>,{' '}
            <code>$Severity</code> and each <code>MetaData</code> key, each only when the alert has it: read one with a default, <code>{'${AlarmName:-}'}</code>. <code>$PITCREW_EXECUTION_ID</code> and <code>$PITCREW_HOSTNAME</code> describe the run.
            {cli ? ' Names that would point a CLI elsewhere (AWS_*, OS_*, KUBE*…) are not taken from the alert.' : null}
          </>
        }
      >
        <ScriptEditor value={form.script} onChange={(script) => update({ script })} interpreter={form.interpreter} />
      </Field>
      <Field
        label={form.runbookSource === 'new' ? 'Notes for people (Markdown, optional)' : 'Notes for people (optional)'}
        error={errors.notes}
        hint={form.runbookSource === 'new' ? 'The runbook’s notes: when to run it, what it does, when a human should step in.' : 'What the runbook does and when a human should step in.'}
      >
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
