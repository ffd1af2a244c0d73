import { useState, type FormEvent } from 'react';
import type { Credential } from '../api/credential-types';
import { problemAtFields } from '../api/problem';
import { Field } from '../ui/Field';
import { PROVIDER_INFO } from './providers';
import { useUpdateCredential } from './queries';
import { SecretFields } from './SecretFields';
import { credentialFieldOf, emptySecret, missingSecretFields, toSecret, type CredentialErrors } from './secret-form';

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
  const { errors, banner } = update.isError ? problemAtFields(update.error, credentialFieldOf) : { errors: {} as CredentialErrors, banner: null };
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
      {banner ? <p className="banner banner-error" role="alert">{banner}</p> : null}
    </section>
  );
}

/** A new secret, whole, in the credential's provider's shape: the old one is replaced, its last test cleared. */
function RotateSecret({ credential }: { credential: Credential }) {
  const { provider } = credential;
  const [values, setValues] = useState(() => emptySecret(provider));
  const [errors, setErrors] = useState<CredentialErrors>({});
  const [banner, setBanner] = useState<string | null>(null);
  const [done, setDone] = useState(false);
  const update = useUpdateCredential(credential.id);
  const submit = (event: FormEvent) => {
    event.preventDefault();
    setBanner(null);
    setDone(false);
    const found = missingSecretFields(provider, values);
    setErrors(found);
    if (Object.keys(found).length > 0) return;
    update.mutate(
      { secret: toSecret(provider, values) },
      {
        onSuccess: () => {
          // The new secret leaves the page: the fields go blank, and the mutation forgets what it sent.
          setValues(emptySecret(provider));
          update.reset();
          setDone(true);
        },
        onError: (error) => {
          const placed = problemAtFields(error, credentialFieldOf);
          setErrors(placed.errors);
          setBanner(placed.banner);
        },
      },
    );
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
            setErrors(({ [field]: _gone, ...rest }) => rest);
            setDone(false);
          }}
        />
        {banner ? (
          <p className="banner banner-error" role="alert">
            <span>{banner}</span>
          </p>
        ) : null}
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
