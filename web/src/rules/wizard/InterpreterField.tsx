import type { Interpreter } from '../../api/types';
import { Field } from '../../ui/Field';
import { LabelOptions } from '../../ui/Options';
import { INTERPRETER_LABELS } from '../describe';

/** Which interpreter runs a script (a rule's, a stored runbook's, a file's in a repository). */
export function InterpreterField({ value, onChange, error }: { value: Interpreter; onChange: (interpreter: Interpreter) => void; error: string | undefined }) {
  return (
    <Field label="Interpreter" error={error}>
      <select value={value} onChange={(event) => onChange(event.target.value as Interpreter)}>
        <LabelOptions labels={INTERPRETER_LABELS} />
      </select>
    </Field>
  );
}
