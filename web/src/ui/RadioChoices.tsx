import { useId, type ReactNode } from 'react';

export interface Choice<T extends string> {
  value: T;
  title: string;
  text: string;
}

interface RadioChoicesProps<T extends string> {
  legend: string;
  choices: ReadonlyArray<Choice<T>>;
  value: T;
  onChange: (value: T) => void;
  error?: string;
  /** choices-inline (two a row) or choices-three; one a row without. */
  layout?: string;
  /** Shown under the choices, before the error: what the chosen one needs. */
  children?: ReactNode;
}

/** One of a few options, each with a line saying what it means; arrow keys move between them. */
export function RadioChoices<T extends string>({ legend, choices, value, onChange, error, layout = '', children }: RadioChoicesProps<T>) {
  const name = useId();
  return (
    <fieldset className={`choices ${layout}`} aria-describedby={error ? `${name}-error` : undefined}>
      <legend>{legend}</legend>
      {choices.map((choice) => (
        <label key={choice.value} className={`choice${value === choice.value ? ' choice-selected' : ''}`}>
          <input type="radio" name={name} checked={value === choice.value} onChange={() => onChange(choice.value)} />
          <span>
            <strong>{choice.title}</strong>
            <span className="choice-text">{choice.text}</span>
          </span>
        </label>
      ))}
      {children}
      {error ? (
        <p className="field-error" id={`${name}-error`} role="alert">
          {error}
        </p>
      ) : null}
    </fieldset>
  );
}
