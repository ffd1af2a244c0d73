import { PitcrewError, type FieldError } from '../errors/catalogue.js';
import type { RunbookInput } from './schema.js';

/**
 * Why an environment name may not be one a runbook expects, or undefined when it may: the rules a
 * webhook payload's names follow (ingress/env.ts), passed in by server/app.ts. Rules will reference
 * runbooks, and ingress reads rules, so runbooks/ may not import ingress/ (docs/architecture.md#layers).
 */
export type EnvNameCheck = (name: string) => string | undefined;

// PostgreSQL's text cannot hold U+0000; a lone surrogate has no UTF-8 bytes, so the stored script
// (and its sha256) would differ from the one sent. Both are refused rather than altered.
const LONE_SURROGATE = /\p{Cs}/u;

/** What the schema cannot say about a runbook; throws a 400 naming every field to fix. */
export function assertRunbook(input: RunbookInput, envNameProblem: EnvNameCheck): void {
  const errors: FieldError[] = [];
  const text = (path: string, value: string | undefined) => {
    if (value === undefined) return;
    if (value.includes('\u0000')) errors.push({ path, message: 'contains a NUL character (\\u0000), which pitcrew cannot store; remove it' });
    else if (LONE_SURROGATE.test(value)) errors.push({ path, message: 'is not valid Unicode (a lone UTF-16 surrogate); send the text as UTF-8' });
  };
  text('/body/name', input.name);
  text('/body/description', input.description);
  text('/body/script', input.script);
  if (input.name.trim() === '') errors.push({ path: '/body/name', message: 'holds only blanks; give the runbook a name to find it by' });
  if (input.script.trim() === '') errors.push({ path: '/body/script', message: 'holds only blanks; a runbook needs at least one command' });
  (input.env ?? []).forEach((name, i) => {
    const problem = envNameProblem(name);
    if (problem) errors.push({ path: `/body/env/${i}`, message: `"${name}" is ${problem}` });
  });
  if (errors.length === 0) return;
  const more = errors.length > 1 ? ` (and ${errors.length - 1} more)` : '';
  throw new PitcrewError('PITCREW_ERR_VALIDATION', `${errors[0]!.path}: ${errors[0]!.message}${more}`, { fieldErrors: errors });
}
