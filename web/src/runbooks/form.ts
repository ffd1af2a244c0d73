import type { RunbookInput, RunbookView } from '../api/runbook-types';
import type { Interpreter } from '../api/types';
import { SAMPLE_SCRIPT } from './sample-scripts';

/** What the runbook form edits: the expected names as typed, one text. */
export interface RunbookForm {
  name: string;
  description: string;
  interpreter: Interpreter;
  script: string;
  /** The environment names, separated by commas, blanks or lines. */
  env: string;
}

export type RunbookField = keyof RunbookForm;
export type RunbookErrors = Partial<Record<RunbookField, string>>;

/** A new runbook starts from the wizard's alert sample: it may run for any alert, whatever fields it lacks. */
export const NEW_RUNBOOK_SCRIPT = SAMPLE_SCRIPT;

export function emptyRunbookForm(): RunbookForm {
  return { name: '', description: '', interpreter: 'sh', script: NEW_RUNBOOK_SCRIPT, env: '' };
}

export function formFromRunbook(runbook: Pick<RunbookView, 'name' | 'description' | 'interpreter' | 'script' | 'env'>): RunbookForm {
  return { name: runbook.name, description: runbook.description, interpreter: runbook.interpreter, script: runbook.script, env: runbook.env.join(', ') };
}

export function envNames(text: string): string[] {
  return text.split(/[\s,]+/).filter(Boolean);
}

/** The whole version to save (a PUT is the whole version): the script byte for byte, the name trimmed as the service would. */
export function toRunbookInput(form: RunbookForm): RunbookInput {
  return { name: form.name.trim(), description: form.description, interpreter: form.interpreter, script: form.script, env: envNames(form.env) };
}

const SHELL_NAME = /^[A-Za-z_][A-Za-z0-9_]*$/;

/** Quick checks before saving; the service checks everything again (reserved names among them). */
export function checkRunbookForm(form: RunbookForm): RunbookErrors {
  const errors: RunbookErrors = {};
  if (!form.name.trim()) errors.name = 'name the runbook, e.g. “disk cleanup”';
  else if (form.name.trim().length > 200) errors.name = 'at most 200 characters';
  if (!form.script.trim()) errors.script = 'write the script to run';
  const names = envNames(form.env);
  const wrong = names.find((name) => !SHELL_NAME.test(name));
  const twice = names.find((name, i) => names.indexOf(name) !== i);
  if (wrong) errors.env = `“${wrong}” is not a shell variable name: letters, digits and _, not starting with a digit`;
  else if (twice) errors.env = `“${twice}” is listed twice`;
  return errors;
}

const FIELDS: Array<[RegExp, RunbookField]> = [
  [/^\/body\/name/, 'name'],
  [/^\/body\/description/, 'description'],
  [/^\/body\/interpreter/, 'interpreter'],
  [/^\/body\/script/, 'script'],
  [/^\/body\/env/, 'env'],
];

/** The form's field a service error's JSON pointer names, if any. */
export function runbookFieldOf(path: string): RunbookField | undefined {
  return FIELDS.find(([pattern]) => pattern.test(path))?.[1];
}
