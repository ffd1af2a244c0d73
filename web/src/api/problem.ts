/** A field the service found wrong: `path` is a JSON pointer such as /body/target/hostname. */
export interface FieldError {
  path: string;
  message: string;
}

/**
 * An error reply of the API (RFC 9457 problem+json), or a failure to reach it. `detail` is
 * written for people: the UI shows it as is, at the field or in a banner.
 */
export class ApiProblem extends Error {
  readonly status: number;
  readonly code: string;
  readonly detail: string;
  readonly fieldErrors: FieldError[];

  constructor(status: number, code: string, detail: string, fieldErrors: FieldError[] = []) {
    super(detail);
    this.name = 'ApiProblem';
    this.status = status;
    this.code = code;
    this.detail = detail;
    this.fieldErrors = fieldErrors;
  }
}

/** Builds the problem from any reply that is not a success, whatever its body. */
export async function problemFrom(response: Response): Promise<ApiProblem> {
  const text = await response.text().catch(() => '');
  try {
    const body = JSON.parse(text) as { code?: string; detail?: string; errors?: FieldError[] };
    if (body.detail) return new ApiProblem(response.status, body.code ?? 'UNKNOWN', body.detail, body.errors ?? []);
  } catch {
    // Not JSON: a proxy's error page, say. The status line is all there is to show.
  }
  return new ApiProblem(response.status, 'HTTP_ERROR', `the service answered ${response.status} ${response.statusText || ''}`.trim());
}

/**
 * The service's field errors placed at a form's fields: `fieldOf` names the field a JSON pointer
 * belongs to, or nothing, and the errors it cannot place are kept for a banner. The first error
 * of a field wins.
 */
export function placeFieldErrors<Field extends PropertyKey>(
  fieldErrors: FieldError[],
  fieldOf: (path: string) => Field | undefined,
): { errors: Partial<Record<Field, string>>; unplaced: FieldError[] } {
  const errors: Partial<Record<Field, string>> = {};
  const unplaced: FieldError[] = [];
  for (const error of fieldErrors) {
    const field = fieldOf(error.path);
    if (field === undefined) unplaced.push(error);
    else errors[field] ??= error.message;
  }
  return { errors, unplaced };
}

/** An error of a form's save: the service's field errors at their fields, and a banner for what they do not say. */
export function problemAtFields<Field extends PropertyKey>(error: unknown, fieldOf: (path: string) => Field | undefined): { errors: Partial<Record<Field, string>>; banner: string | null } {
  const { errors, unplaced } = placeFieldErrors(error instanceof ApiProblem ? error.fieldErrors : [], fieldOf);
  const banner = unplaced.length > 0 || Object.keys(errors).length === 0 ? messageOf(error) : null;
  return { errors, banner };
}

/** problemAtFields for a mutation's last try: no problem while it has not failed. */
export function mutationProblem<Field extends PropertyKey>(mutation: { isError: boolean; error: unknown }, fieldOf: (path: string) => Field | undefined): { errors: Partial<Record<Field, string>>; banner: string | null } {
  return mutation.isError ? problemAtFields(mutation.error, fieldOf) : { errors: {}, banner: null };
}

export function networkProblem(error: unknown): ApiProblem {
  const reason = error instanceof Error ? error.message : String(error);
  return new ApiProblem(0, 'NETWORK', `the service did not answer (${reason}); check that pitcrew server is running and reachable`);
}

export function messageOf(error: unknown): string {
  if (error instanceof ApiProblem) return error.detail;
  return error instanceof Error ? error.message : String(error);
}
