import type { Provider } from '../api/credential-types';
import { Field } from '../ui/Field';
import { PROVIDER_INFO, type SecretField } from './providers';
import type { CredentialErrors, SecretValues } from './secret-form';

interface SecretFieldsProps {
  provider: Provider;
  values: SecretValues;
  onChange: (name: string, value: string) => void;
  errors: CredentialErrors;
}

/**
 * The fields of a provider's secret, all blank: a stored secret is never shown or sent back, so
 * these only ever hold what the person types now. Secret values are password inputs.
 */
export function SecretFields({ provider, values, onChange, errors }: SecretFieldsProps) {
  return (
    <>
      {PROVIDER_INFO[provider].fields.map((field) => (
        <Field key={field.name} label={field.label} hint={field.hint} error={errors[field.name]}>
          {control(field, values[field.name] ?? '', (value) => onChange(field.name, value))}
        </Field>
      ))}
      {PROVIDER_INFO[provider].fields.some((field) => field.kind === 'json') ? (
        <LoadKeyFile onLoad={(text) => onChange('serviceAccountJson', text)} />
      ) : null}
    </>
  );
}

function control(field: SecretField, value: string, onChange: (value: string) => void) {
  const common = { value, onChange: (event: { target: { value: string } }) => onChange(event.target.value), spellCheck: false, className: 'mono', name: field.name };
  switch (field.kind) {
    case 'json':
      return <textarea {...common} rows={8} placeholder='{"type": "service_account", "project_id": …}' autoComplete="off" />;
    case 'password':
      // new-password: the browser must not offer to fill in, or to save, a cloud secret.
      return <input {...common} type="password" autoComplete="new-password" />;
    case 'text':
      return <input {...common} type="text" placeholder={field.placeholder} autoComplete="off" />;
  }
}

/** Reads a key file into the field, in the page only: nothing is sent before Save. */
function LoadKeyFile({ onLoad }: { onLoad: (text: string) => void }) {
  return (
    <label className="file-load">
      Or load the key file:{' '}
      <input
        type="file"
        accept="application/json,.json"
        onChange={(event) => {
          const file = event.target.files?.[0];
          // The file input is cleared at once: it would otherwise keep the key file's name and contents reachable.
          event.target.value = '';
          if (file) void file.text().then(onLoad);
        }}
      />
    </label>
  );
}
