import { useState, type FormEvent } from 'react';
import type { Repository } from '../api/repository-types';
import { mutationProblem } from '../api/problem';
import { ConfirmedAction } from '../ui/ConfirmedAction';
import { Field } from '../ui/Field';
import { FormBanner } from '../ui/states';
import { useSecretSubmit } from '../ui/useSecretSubmit';
import { AccessFields } from './AccessFields';
import { useUpdateRepository } from './queries';
import { looksLikeSsh, missingAccess, NO_SECRETS, repositoryFieldOf, toCredential, toRepositoryPatch, type AccessForm } from './repository-form';

/** Change where it is (name, URL, ref, host keys), and replace or remove the credential: each saved on its own. */
export function RepositorySettings({ repository }: { repository: Repository }) {
  return (
    <div className="columns">
      <ChangeRepository repository={repository} />
      <ReplaceCredential repository={repository} />
    </div>
  );
}

function ChangeRepository({ repository }: { repository: Repository }) {
  const [form, setForm] = useState({ name: repository.name, url: repository.url, ref: repository.ref, knownHosts: repository.knownHosts ?? '' });
  const [saved, setSaved] = useState(false);
  const update = useUpdateRepository(repository.id);
  const { errors, banner } = mutationProblem(update, repositoryFieldOf);
  const patch = toRepositoryPatch(repository, form);
  const change = (next: Partial<typeof form>) => {
    setForm((current) => ({ ...current, ...next }));
    setSaved(false);
  };
  const submit = (event: FormEvent) => {
    event.preventDefault();
    update.mutate(patch, { onSuccess: () => setSaved(true) });
  };
  return (
    <section className="panel">
      <h2>Change</h2>
      <form onSubmit={submit} aria-label="change the repository" noValidate>
        <Field label="Name" error={errors.name}>
          <input value={form.name} onChange={(event) => change({ name: event.target.value })} maxLength={200} autoComplete="off" />
        </Field>
        <Field label="URL" error={errors.url ?? errors.access}>
          <input className="mono" value={form.url} onChange={(event) => change({ url: event.target.value })} maxLength={2048} autoComplete="off" spellCheck={false} />
        </Field>
        <Field label="Ref" error={errors.ref} hint="Rules that name no ref read their runbook at this one from their next run on.">
          <input className="mono" value={form.ref} onChange={(event) => change({ ref: event.target.value })} maxLength={255} autoComplete="off" spellCheck={false} />
        </Field>
        {looksLikeSsh(form.url) ? (
          <Field label="Known hosts" error={errors.knownHosts}>
            <textarea className="mono" rows={3} value={form.knownHosts} onChange={(event) => change({ knownHosts: event.target.value })} spellCheck={false} />
          </Field>
        ) : null}
        <FormBanner banner={banner} />
        <div className="form-actions">
          <button type="submit" className="button" disabled={update.isPending || Object.keys(patch).length === 0}>
            {update.isPending ? 'Saving…' : 'Save changes'}
          </button>
          {saved ? (
            <span className="saved" role="status">
              Saved.
            </span>
          ) : null}
        </div>
      </form>
    </section>
  );
}

/** A new credential whole (it replaces the stored one for every rule), or none; nothing of the old one is shown. */
function ReplaceCredential({ repository }: { repository: Repository }) {
  const first: AccessForm = { access: repository.auth === 'none' ? 'token' : repository.auth, ...NO_SECRETS, knownHosts: '' };
  const [form, setForm] = useState(first);
  const [done, setDone] = useState<string | null>(null);
  const update = useUpdateRepository(repository.id);
  const remove = useUpdateRepository(repository.id);
  const { errors, banner, submit: send, clearErrors } = useSecretSubmit(update, repositoryFieldOf);
  const submit = (event: FormEvent) => {
    event.preventDefault();
    setDone(null);
    send(missingAccess(form, false), { credential: toCredential(form) ?? null }, () => {
      // The new secret leaves the page: the fields go blank.
      setForm((current) => ({ ...current, ...NO_SECRETS }));
      setDone('Credential replaced. Its last test was cleared: test the connection again.');
    });
  };
  return (
    <section className="panel">
      <h2>Replace the credential</h2>
      <p className="muted">
        Type the new token or deploy key whole; it replaces the stored one at once, for every rule that reads this repository. Nothing of the old one is
        kept or shown.
      </p>
      <form onSubmit={submit} className="repository-form" aria-label="replace the credential" noValidate>
        <AccessFields
          form={form}
          errors={errors}
          withKnownHosts={false}
          onChange={(patch) => {
            setForm((current) => ({ ...current, ...patch, ...(patch.access && patch.access !== current.access ? NO_SECRETS : {}) }));
            clearErrors();
            setDone(null);
          }}
        />
        <FormBanner banner={banner} />
        <div className="form-actions">
          <button type="submit" className="button" disabled={update.isPending}>
            {update.isPending ? 'Replacing…' : form.access === 'none' ? 'Save: public' : 'Replace credential'}
          </button>
          {repository.auth !== 'none' ? (
            <ConfirmedAction
              label="Remove the credential"
              buttonClassName="button button-danger-quiet"
              title="Remove the credential?"
              confirmLabel="Remove credential"
              mutation={remove}
              onConfirm={(close) => remove.mutate({ credential: null }, { onSuccess: () => { close(); setDone('Credential removed: the repository is read as a public one.'); } })}
            >
              <p>The stored {repository.auth === 'token' ? 'token' : 'deploy key'} is deleted; pitcrew then reads the repository as a public one, which fails if it is not.</p>
            </ConfirmedAction>
          ) : null}
          {done ? (
            <span className="saved" role="status">
              {done}
            </span>
          ) : null}
        </div>
      </form>
    </section>
  );
}
