import { useState, type FormEvent } from 'react';
import { useNavigate } from 'react-router';
import { PROVIDERS, type Provider } from '../api/credential-types';
import { Field } from '../ui/Field';
import { FormBanner } from '../ui/states';
import { useSecretSubmit } from '../ui/useSecretSubmit';
import { PROVIDER_INFO } from './providers';
import { useCreateCredential } from './queries';
import { SecretFields } from './SecretFields';
import { credentialFieldOf, emptySecret, missingSecretFields, toSecret, type CredentialErrors } from './secret-form';

/** Stores a new credential: a name, its provider, and the provider's secret, sealed by the service and never shown again. */
export function AddCredential({ initialProvider = 'aws' }: { initialProvider?: Provider }) {
  const [name, setName] = useState('');
  const [provider, setProvider] = useState<Provider>(initialProvider);
  const [values, setValues] = useState(() => emptySecret(initialProvider));
  const create = useCreateCredential();
  const { errors, banner, submit: send, clearErrors } = useSecretSubmit(create, credentialFieldOf);
  const navigate = useNavigate();

  const choose = (next: Provider) => {
    setProvider(next);
    setValues(emptySecret(next));
    clearErrors();
  };
  const submit = (event: FormEvent) => {
    event.preventDefault();
    const found: CredentialErrors = { ...(name.trim() ? {} : { name: 'name the credential, e.g. “aws prod”' }), ...missingSecretFields(provider, values) };
    send(found, { name: name.trim(), provider, secret: toSecret(provider, values) }, (made) => {
      // The secret leaves the page's state as soon as the service holds it.
      setValues(emptySecret(provider));
      setName('');
      void navigate(`/credentials/${made.id}`);
    });
  };
  return (
    <section className="panel">
      <h2>Store a credential</h2>
      <form onSubmit={submit} className="credential-form" aria-label="store a credential" noValidate>
        <div className="field-row">
          <Field label="Name" hint="How rules name it, e.g. “aws prod”." error={errors.name}>
            <input value={name} onChange={(event) => { setName(event.target.value); clearErrors(['name']); }} maxLength={200} autoComplete="off" />
          </Field>
          <Field label="Provider" hint={PROVIDER_INFO[provider].what} error={errors.provider}>
            <select value={provider} onChange={(event) => choose(event.target.value as Provider)}>
              {PROVIDERS.map((value) => (
                <option key={value} value={value}>
                  {PROVIDER_INFO[value].title}
                </option>
              ))}
            </select>
          </Field>
        </div>
        <SecretFields
          provider={provider}
          values={values}
          errors={errors}
          onChange={(field, value) => {
            setValues((current) => ({ ...current, [field]: value }));
            clearErrors([field]);
          }}
        />
        <p className="field-hint">Write-only: the service stores the secret encrypted and never shows it again, here or in the API.</p>
        <FormBanner banner={banner} />
        <div className="form-actions">
          <button type="submit" className="button button-primary" disabled={create.isPending}>
            {create.isPending ? 'Storing…' : 'Store credential'}
          </button>
        </div>
      </form>
    </section>
  );
}
