import type { UseMutationResult } from '@tanstack/react-query';
import { useState } from 'react';
import { problemAtFields } from '../api/problem';

type Errors<Field extends string> = Partial<Record<Field, string>>;

/**
 * Submitting a write-only secret (a cloud credential, a git token or deploy key): the form's own
 * check first, then the service's refusal placed at the fields it names (the rest in a banner).
 * Once the service holds the secret, the mutation forgets what it sent and `onSent` blanks the
 * fields: the secret does not stay in the page.
 */
export function useSecretSubmit<Field extends string, Input, Result>(mutation: UseMutationResult<Result, Error, Input>, fieldOf: (path: string) => Field | undefined) {
  const [errors, setErrors] = useState<Errors<Field>>({});
  const [banner, setBanner] = useState<string | null>(null);
  const submit = (found: Errors<Field>, input: Input, onSent: (result: Result) => void) => {
    setErrors(found);
    setBanner(null);
    if (Object.keys(found).length > 0) return;
    mutation.mutate(input, {
      onSuccess: (result) => {
        mutation.reset();
        onSent(result);
      },
      onError: (error) => {
        const placed = problemAtFields(error, fieldOf);
        setErrors(placed.errors);
        setBanner(placed.banner);
      },
    });
  };
  const clearErrors = (fields?: Field[]) => setErrors((current) => (fields ? withoutFields(current, fields) : {}));
  return { errors, banner, submit, clearErrors };
}

function withoutFields<Field extends string>(errors: Errors<Field>, fields: Field[]): Errors<Field> {
  const next = { ...errors };
  for (const field of fields) delete next[field];
  return next;
}
