import { Field } from '../../ui/Field';

interface SecretInputProps {
  label: string;
  value: string;
  onChange: (value: string) => void;
  error?: string;
  /** Says what is stored ("A password is set."), or null when nothing is. */
  stored: string | null;
  hint?: string;
  /** Hidden as typed (a password); a webhook URL is shown so it can be checked. */
  hidden?: boolean;
}

/**
 * A write-only setting: the stored value is never shown or sent back. Left blank, the service
 * keeps what it has; typed, it replaces it.
 */
export function SecretInput({ label, value, onChange, error, stored, hint, hidden }: SecretInputProps) {
  const storedHint = stored === null ? hint : `${stored} Leave blank to keep it; type a new one to replace it.`;
  return (
    <Field label={label} error={error} hint={storedHint}>
      <input
        type={hidden ? 'password' : 'text'}
        className="mono"
        value={value}
        onChange={(event) => onChange(event.target.value)}
        placeholder={stored === null ? '' : 'set: leave blank to keep'}
        autoComplete={hidden ? 'new-password' : 'off'}
        spellCheck={false}
      />
    </Field>
  );
}
