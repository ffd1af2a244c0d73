import { Field } from '../../ui/Field';
import type { FieldsProps } from './fields';
import { RadioChoices } from '../../ui/RadioChoices';
import { SecretInput } from './SecretInput';

// The usual ports: a port still at the other mode's default follows the mode.
const TLS_PORT = '465';
const STARTTLS_PORT = '587';

const ENCRYPTION = [
  { value: 'starttls', title: 'STARTTLS', text: 'Connects in clear, then upgrades (usually port 587).' },
  { value: 'tls', title: 'TLS', text: 'Encrypted from the first byte (usually port 465).' },
] as const;

export function EmailFields({ form, update, errors, stored }: FieldsProps) {
  const setSecure = (secure: boolean) => {
    const port = form.port === (secure ? STARTTLS_PORT : TLS_PORT) ? (secure ? TLS_PORT : STARTTLS_PORT) : form.port;
    update({ secure, port });
  };
  return (
    <>
      <div className="field-row">
        <Field label="SMTP server" error={errors.host}>
          <input value={form.host} onChange={(event) => update({ host: event.target.value })} placeholder="smtp.example.com" autoComplete="off" spellCheck={false} />
        </Field>
        <Field label="Port" error={errors.port}>
          <input inputMode="numeric" value={form.port} onChange={(event) => update({ port: event.target.value })} />
        </Field>
      </div>
      <RadioChoices legend="Encryption" layout="choices-inline" choices={ENCRYPTION} value={form.secure ? 'tls' : 'starttls'} onChange={(choice) => setSecure(choice === 'tls')} />
      {form.secure ? null : (
        <label className="checkbox">
          <input type="checkbox" checked={form.requireTls} onChange={(event) => update({ requireTls: event.target.checked })} />
          Refuse to send unless the STARTTLS upgrade succeeds (turn off only for a local relay without TLS)
        </label>
      )}
      <div className="field-row">
        <Field label="Username" error={errors.username} hint="Blank: no SMTP AUTH.">
          <input value={form.username} onChange={(event) => update({ username: event.target.value })} autoComplete="off" spellCheck={false} />
        </Field>
        <SecretInput
          label="Password"
          value={form.password}
          onChange={(password) => update({ password })}
          error={errors.password}
          stored={stored.password ? 'A password is set.' : null}
          hidden
        />
      </div>
      <Field label="From" error={errors.from}>
        <input value={form.from} onChange={(event) => update({ from: event.target.value })} placeholder="pitcrew <pitcrew@example.com>" autoComplete="off" />
      </Field>
      <Field label="To" error={errors.to} hint="One address a line.">
        <textarea rows={3} className="mono" value={form.to} onChange={(event) => update({ to: event.target.value })} placeholder="oncall@example.com" spellCheck={false} />
      </Field>
      <Field
        label="Trusted CA (optional)"
        error={errors.ca}
        hint="PEM certificate(s) for a server with a private CA or a self-signed certificate. The server's certificate is always verified."
      >
        <textarea rows={3} className="mono" value={form.ca} onChange={(event) => update({ ca: event.target.value })} placeholder="-----BEGIN CERTIFICATE-----" spellCheck={false} />
      </Field>
    </>
  );
}
