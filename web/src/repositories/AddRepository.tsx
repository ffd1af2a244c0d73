import { useState, type FormEvent } from 'react';
import { useNavigate } from 'react-router';
import { Field } from '../ui/Field';
import { FormBanner } from '../ui/states';
import { useSecretSubmit } from '../ui/useSecretSubmit';
import { AccessFields } from './AccessFields';
import { useCreateRepository } from './queries';
import { checkRepositoryForm, emptyRepositoryForm, looksLikeSsh, NO_SECRETS, repositoryFieldOf, toRepositoryInput, type RepositoryField, type RepositoryForm } from './repository-form';

/** Connects a repository: its URL, the ref runbooks are read at, and the credential, sealed by the service and never shown again. */
export function AddRepository() {
  const [form, setForm] = useState(emptyRepositoryForm);
  const create = useCreateRepository();
  const { errors, banner, submit: send, clearErrors } = useSecretSubmit(create, repositoryFieldOf);
  const navigate = useNavigate();

  const update = (patch: Partial<RepositoryForm>) => {
    setForm((current) => ({ ...current, ...patch }));
    clearErrors(Object.keys(patch) as RepositoryField[]);
  };
  // An SSH URL takes a deploy key: the access follows the URL as it is typed, until someone picks it.
  const [accessPicked, setAccessPicked] = useState(false);
  const typeUrl = (url: string) => update({ url, ...(accessPicked || !url.trim() ? {} : { access: looksLikeSsh(url) ? 'ssh_key' : form.access === 'ssh_key' ? 'token' : form.access }) });

  const submit = (event: FormEvent) => {
    event.preventDefault();
    send(checkRepositoryForm(form), toRepositoryInput(form), (made) => {
      // The secret leaves the page's state as soon as the service holds it.
      setForm(emptyRepositoryForm());
      void navigate(`/repositories/${made.id}`);
    });
  };
  return (
    <section className="panel">
      <h2>Connect a repository</h2>
      <form onSubmit={submit} className="repository-form" aria-label="connect a repository" noValidate>
        <div className="field-row">
          <Field label="Name" hint="How rules and executions name it, e.g. “ops-runbooks”." error={errors.name}>
            <input value={form.name} onChange={(event) => update({ name: event.target.value })} maxLength={200} autoComplete="off" />
          </Field>
          <Field label="Ref" hint="The branch or tag runbooks are read at, unless a rule names another." error={errors.ref}>
            <input className="mono" value={form.ref} onChange={(event) => update({ ref: event.target.value })} maxLength={255} autoComplete="off" spellCheck={false} />
          </Field>
        </div>
        <Field label="URL" hint="https://host/owner/repo.git, or ssh://git@host/owner/repo.git (git@host:owner/repo.git). Never with a credential inside." error={errors.url}>
          <input className="mono" value={form.url} onChange={(event) => typeUrl(event.target.value)} maxLength={2048} autoComplete="off" spellCheck={false} />
        </Field>
        <AccessFields
          form={form}
          errors={errors}
          onChange={(patch) => {
            if (patch.access) setAccessPicked(true);
            // A secret typed for the other kind is dropped, not kept in the page.
            update(patch.access && patch.access !== form.access ? { ...patch, ...NO_SECRETS } : patch);
          }}
        />
        <p className="field-hint">pitcrew only reads: it fetches the files runbooks name, at the commit a ref points to, and never pushes. Give it a read-only credential.</p>
        <FormBanner banner={banner} />
        <div className="form-actions">
          <button type="submit" className="button button-primary" disabled={create.isPending}>
            {create.isPending ? 'Connecting…' : 'Connect repository'}
          </button>
        </div>
      </form>
    </section>
  );
}
