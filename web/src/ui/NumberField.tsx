import type { ReactNode } from 'react';
import { Field } from './Field';

interface NumberFieldProps {
  label: string;
  hint?: ReactNode;
  error?: string | undefined;
  /** Kept as text, so a half-typed value is never silently changed. */
  value: string;
  onChange: (value: string) => void;
  disabled?: boolean;
  placeholder?: string;
}

/** A whole number typed as text, with its label, hint and error. */
export function NumberField({ label, hint, error, value, onChange, disabled, placeholder }: NumberFieldProps) {
  return (
    <Field label={label} error={error} hint={hint}>
      <input inputMode="numeric" value={value} disabled={disabled} placeholder={placeholder} onChange={(event) => onChange(event.target.value)} />
    </Field>
  );
}
