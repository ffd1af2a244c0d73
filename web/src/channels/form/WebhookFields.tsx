import { Field } from '../../ui/Field';
import { SignatureHelp } from '../SignatureHelp';
import type { FieldsProps } from './fields';
import { SecretInput } from './SecretInput';

/** A random signing secret, typed into the field so it can be copied to the receiver before saving. */
function randomSecret(): string {
  return Array.from(crypto.getRandomValues(new Uint8Array(32)), (byte) => byte.toString(16).padStart(2, '0')).join('');
}

export function WebhookFields({ form, update, errors, stored }: FieldsProps) {
  return (
    <>
      <Field label="Receiver URL" error={errors.url} hint="pitcrew POSTs JSON here; answer 2xx once stored, anything else is retried.">
        <input className="mono" value={form.url} onChange={(event) => update({ url: event.target.value })} placeholder="https://events.example.com/pitcrew" autoComplete="off" spellCheck={false} />
      </Field>
      <div className="secret-with-action">
        <SecretInput
          label="Signing secret"
          value={form.secret}
          onChange={(secret) => update({ secret })}
          error={errors.secret}
          stored={stored.secret ? 'A signing secret is set.' : null}
          hint="At least 16 characters. Your receiver checks each request's signature with it; store it there too."
        />
        <button type="button" className="button button-small" onClick={() => update({ secret: randomSecret() })}>
          Generate
        </button>
      </div>
      <details className="disclosure">
        <summary>How your receiver verifies the signature</summary>
        <SignatureHelp />
      </details>
    </>
  );
}
