import { useState, type FormEvent } from 'react';
import type { Credential } from '../api/credential-types';
import { mutationProblem } from '../api/problem';
import { Field } from '../ui/Field';
import { FormBanner } from '../ui/states';
import { useSecretSubmit } from '../ui/useSecretSubmit';
import { PROVIDER_INFO } from './providers';
import { useUpdateCredential } from './queries';
import { SecretFields } from './SecretFields';
import { credentialFieldOf, emptySecret, missingSecretFields, toSecret } from './secret-form';

/** Rename, and rotate the secret: each saved on its own (PATCH name, PATCH secret). */
export function CredentialSettings({ credential }: { credential: Credential }) {
  return (
    <div className="columns">
      <Rename credential={credential} />
      <RotateSecret credential={credential} />
    </div>
  );
}

function Rename({ credential }: { credential: Credential }) {
  const [name, setName] = useState(credential.name);
  const [saved, setSaved] = useState(false);
  const update = useUpdateCredential(credential.id);
  const { errors, banner } = mutationProblem(update, credentialFieldOf);
  const submit = (event: FormEvent) => {
    event.preventDefault();
    setSaved(false);
    update.mutate({ name: name.trim() }, { onSuccess: () => setSaved(true) });
  };
  return (
    <section className="panel">
      <h2>Rename</h2>
      <form onSubmit={submit} className="inline-form" aria-label="rename the credential">
        <Field label="Name" error={errors.name}>
          <input value={name} onChange={(event) => { setName(event.target.value); setSaved(false); }} maxLength={200} autoComplete="off" />
        </Field>
        <button type="submit" className="button" disabled={update.isPending || !name.trim() || name.trim() === credential.name}>
          Rename
        </button>
      </form>
      {saved ? <p className="saved" role="status">Renamed. Rules keep using it.</p> : null}
      <FormBanner banner={banner} />
    </section>
  );
}

/** A new secret, whole, in the credential's provider's shape: the old one is replaced, its last test cleared. */
function RotateSecret({ credential }: { credential: Credential }) {
  const { provider } = credential;
  const [values, setValues] = useState(() => emptySecret(provider));
  const [done, setDone] = useState(false);
  const update = useUpdateCredential(credential.id);
  const { errors, banner, submit: send, clearErrors } = useSecretSubmit(update, credentialFieldOf);
  const submit = (event: FormEvent) => {
    event.preventDefault();
    setDone(false);
    send(missingSecretFields(provider, values), { secret: toSecret(provider, values) }, () => {
      // The new secret leaves the page: the fields go blank.
      setValues(emptySecret(provider));
      setDone(true);
    });
  };
  return (
    <section className="panel">
      <h2>Rotate the secret</h2>
      <p className="muted">
        Type the new {PROVIDER_INFO[provider].title} secret whole; it replaces the stored one at once, for every rule that uses this credential. Nothing of
        the old secret is kept or shown.
      </p>
      <form onSubmit={submit} className="credential-form" aria-label="rotate the secret" noValidate>
        <SecretFields
          provider={provider}
          values={values}
          errors={errors}
          onChange={(field, value) => {
            setValues((current) => ({ ...current, [field]: value }));
            clearErrors([field]);
            setDone(false);
          }}
        />
        <FormBanner banner={banner} />
        <div className="form-actions">
          <button type="submit" className="button" disabled={update.isPending}>
            {update.isPending ? 'Replacing…' : 'Replace secret'}
          </button>
          {done ? (
            <span className="saved" role="status">
              Secret replaced. Its last test was cleared: test it again.
            </span>
          ) : null}
        </div>
      </form>
    </section>
  );
}
