import { useEffect, useRef, useState, type FormEvent } from 'react';
import { Link, useNavigate, useParams } from 'react-router';
import { problemAtFields } from '../api/problem';
import type { RunbookSaved, RunbookView } from '../api/runbook-types';
import { InterpreterField } from '../rules/wizard/InterpreterField';
import { ScriptEditor } from '../rules/wizard/ScriptEditor';
import { Field } from '../ui/Field';
import { PageHeader } from '../ui/PageHeader';
import { FormBanner, Loadable } from '../ui/states';
import { checkRunbookForm, emptyRunbookForm, formFromRunbook, runbookFieldOf, toRunbookInput, type RunbookErrors, type RunbookField, type RunbookForm } from './form';
import { Markdown } from './Markdown';
import { useCreateRunbook, useRunbook, useSaveRunbook } from './queries';
import type { SavedState } from './RunbookPage';

/** /runbooks/new stores a runbook as version 1; /runbooks/:id/edit saves its next version. */
export default function RunbookFormPage() {
  const { id } = useParams();
  if (!id) return <RunbookEditor initial={emptyRunbookForm()} />;
  return <EditRunbook id={id} />;
}

function EditRunbook({ id }: { id: string }) {
  const runbook = useRunbook(id);
  return <Loadable query={runbook} what="the runbook">{(data) => <RunbookEditor key={data.id} initial={formFromRunbook(data)} runbook={data} />}</Loadable>;
}

function RunbookEditor({ initial, runbook }: { initial: RunbookForm; runbook?: RunbookView }) {
  const navigate = useNavigate();
  const create = useCreateRunbook();
  const save = useSaveRunbook(runbook?.id ?? '');
  const saving = create.isPending || save.isPending;
  const [form, setForm] = useState(initial);
  const [errors, setErrors] = useState<RunbookErrors>({});
  const [banner, setBanner] = useState<string | null>(null);
  const body = useRef<HTMLFormElement>(null);

  const update = (patch: Partial<RunbookForm>) => {
    setForm((current) => ({ ...current, ...patch }));
    setErrors((current) => {
      const next = { ...current };
      for (const field of Object.keys(patch) as RunbookField[]) delete next[field];
      return next;
    });
  };

  // Errors to fix move the focus to the first of them; typing never moves it.
  const [focusRequest, setFocusRequest] = useState(0);
  useEffect(() => {
    if (focusRequest > 0) body.current?.querySelector<HTMLElement>('[aria-invalid="true"]')?.focus();
  }, [focusRequest]);
  const showErrors = (found: RunbookErrors) => {
    setErrors(found);
    setFocusRequest((n) => n + 1);
  };

  const submit = (event: FormEvent) => {
    event.preventDefault();
    const found = checkRunbookForm(form);
    if (Object.keys(found).length > 0) return showErrors(found);
    setBanner(null);
    const onSuccess = (saved: RunbookSaved) => {
      const state: SavedState = { saved: { version: saved.version, created: saved.versionCreated } };
      void navigate(`/runbooks/${saved.id}`, { state });
    };
    const onError = (error: unknown) => {
      const placed = problemAtFields(error, runbookFieldOf);
      showErrors(placed.errors);
      setBanner(placed.banner);
    };
    if (runbook) save.mutate(toRunbookInput(form), { onSuccess, onError });
    else create.mutate(toRunbookInput(form), { onSuccess, onError });
  };

  return (
    <>
      <PageHeader
        title={runbook ? `Edit ${runbook.name}` : 'New runbook'}
        subtitle={
          runbook
            ? `Saving makes version ${runbook.version + 1}; version ${runbook.version} and those before stay as they are. Rules that follow the latest run the new one from their next run.`
            : 'Saved as version 1. Rules can then run it, following its latest version or pinned to one.'
        }
      />
      <form className="panel runbook-form" ref={body} onSubmit={submit} aria-label={runbook ? 'edit the runbook' : 'new runbook'} noValidate>
        <FormBanner banner={banner} />
        <RunbookFields form={form} update={update} errors={errors} />
        <div className="wizard-nav">
          <Link to={runbook ? `/runbooks/${runbook.id}` : '/runbooks'} className="button button-quiet">
            Cancel
          </Link>
          <span className="spacer" />
          <button type="submit" className="button button-primary" disabled={saving}>
            {saving ? 'Saving…' : runbook ? 'Save version' : 'Save runbook'}
          </button>
        </div>
      </form>
    </>
  );
}

/** A runbook's fields: the wizard's "save what I write as a new runbook" uses them too. */
export function RunbookFields({ form, update, errors }: { form: RunbookForm; update: (patch: Partial<RunbookForm>) => void; errors: RunbookErrors }) {
  return (
    <>
      <div className="field-row">
        <Field label="Name" hint="Unique in the tenant; rules and executions show it." error={errors.name}>
          <input value={form.name} onChange={(event) => update({ name: event.target.value })} maxLength={200} autoComplete="off" />
        </Field>
        <InterpreterField value={form.interpreter} onChange={(interpreter) => update({ interpreter })} error={errors.interpreter} />
      </div>
      <Field label="Script" error={errors.script} hint="Kept byte for byte; its SHA-256 tells versions apart.">
        <ScriptEditor value={form.script} onChange={(script) => update({ script })} interpreter={form.interpreter} />
      </Field>
      <Field
        label="Variables it expects (optional)"
        error={errors.env}
        hint={
          <>
            The names the script reads from the alert, separated by commas or spaces: <code>HostName</code>, a <code>MetaData</code> key.
          </>
        }
      >
        <input className="mono" value={form.env} onChange={(event) => update({ env: event.target.value })} placeholder="HostName, Mount" autoComplete="off" spellCheck={false} />
      </Field>
      <Field label="Notes for people (Markdown, optional)" error={errors.description} hint="When to run it, what it does, how to tell it worked, when to call a human.">
        <textarea rows={6} value={form.description} onChange={(event) => update({ description: event.target.value })} />
      </Field>
      {form.description.trim() ? (
        <details className="disclosure">
          <summary>Preview the notes</summary>
          <Markdown source={form.description} />
        </details>
      ) : null}
    </>
  );
}
