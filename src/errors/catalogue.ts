/**
 * The one catalogue of coded errors. Each code has its HTTP status and a problem type
 * (RFC 9457 `type`, documented in docs/errors.md). Messages must tell a person what to do.
 */
export const errorCatalogue = {
  PITCREW_ERR_VALIDATION: { status: 400, title: 'The request is not valid' },
  PITCREW_ERR_MALFORMED_JSON: { status: 400, title: 'The body is not valid JSON' },
  PITCREW_ERR_BAD_CURSOR: { status: 400, title: 'The pagination cursor is not valid' },
  PITCREW_ERR_UNAUTHENTICATED: { status: 401, title: 'Authentication required' },
  PITCREW_ERR_INVALID_API_KEY: { status: 401, title: 'Unknown or revoked API key' },
  PITCREW_ERR_INVALID_SIGNATURE: { status: 401, title: "The monitoring tool's signature does not verify" },
  PITCREW_ERR_IP_NOT_ALLOWED: { status: 403, title: 'Caller address not on the allowlist' },
  PITCREW_ERR_KEY_SCOPE: { status: 403, title: 'The API key lacks the scope for this call' },
  PITCREW_ERR_FORBIDDEN: { status: 403, title: 'Your role in this tenant does not allow this' },
  PITCREW_ERR_CSRF: { status: 403, title: 'The request did not come from the pitcrew UI' },
  PITCREW_ERR_LINK_INVALID: { status: 403, title: 'The signed link is expired or not valid' },
  PITCREW_ERR_SIGN_IN_FAILED: { status: 401, title: 'Sign-in failed' },
  PITCREW_ERR_SIGN_IN_LOCKED: { status: 429, title: 'Too many failed sign-ins' },
  PITCREW_ERR_SECOND_FACTOR_REQUIRED: { status: 401, title: "The account's second-factor code is needed" },
  PITCREW_ERR_SSO_REQUIRED: { status: 403, title: 'This tenant signs in with single sign-on' },
  PITCREW_ERR_NOT_FOUND: { status: 404, title: 'Not found' },
  PITCREW_ERR_TRIGGER_NOT_FOUND: { status: 404, title: 'No such trigger' },
  PITCREW_ERR_INTEGRATION_NOT_FOUND: { status: 404, title: 'No such integration' },
  PITCREW_ERR_CONFLICT: { status: 409, title: 'Conflict with the current state' },
  PITCREW_ERR_HOST_ALREADY_ENROLLED: { status: 409, title: 'A host of this name is already enrolled' },
  PITCREW_ERR_BODY_TOO_LARGE: { status: 413, title: 'The body is too large' },
  PITCREW_ERR_UNSUPPORTED_MEDIA_TYPE: { status: 415, title: 'Unsupported media type' },
  PITCREW_ERR_IDEMPOTENCY_KEY_REUSED: { status: 422, title: 'Idempotency key reused for a different request' },
  PITCREW_ERR_THROTTLED: { status: 429, title: 'Too many requests for this tenant' },
  PITCREW_ERR_INTERNAL: { status: 500, title: 'Internal error' },
  PITCREW_ERR_CHANNEL_DELIVERY_FAILED: { status: 502, title: 'The channel did not accept the message' },
  PITCREW_ERR_TOOL_REFUSED: { status: 502, title: "The monitoring tool's service refused the call" },
  PITCREW_ERR_PROVIDER_REFUSED: { status: 502, title: 'The cloud provider refused the call' },
  PITCREW_ERR_NOT_IMPLEMENTED: { status: 501, title: 'Not in this version' },
  PITCREW_ERR_STORAGE_UNAVAILABLE: { status: 503, title: 'Storage unavailable' },
  PITCREW_ERR_STOPPING: { status: 503, title: 'The service is stopping' },
  PITCREW_ERR_TOOL_UNAVAILABLE: { status: 503, title: 'A service the monitoring tool relies on did not answer' },
  PITCREW_ERR_PROVIDER_UNAVAILABLE: { status: 503, title: 'The cloud provider did not answer' },
} as const satisfies Record<string, { status: number; title: string }>;

export type ErrorCode = keyof typeof errorCatalogue;

export interface FieldError {
  /** JSON pointer into the request (e.g. /body/target/hostname). */
  path: string;
  message: string;
}

/** An error whose cause and remedy are known: it becomes a problem+json reply with its code. */
export class PitcrewError extends Error {
  readonly code: ErrorCode;
  readonly status: number;
  readonly fieldErrors: FieldError[] | undefined;
  readonly headers: Record<string, string> | undefined;

  constructor(code: ErrorCode, detail: string, extra: { fieldErrors?: FieldError[]; headers?: Record<string, string> } = {}) {
    super(detail);
    this.name = 'PitcrewError';
    this.code = code;
    this.status = errorCatalogue[code].status;
    this.fieldErrors = extra.fieldErrors;
    this.headers = extra.headers;
  }
}

export function problemType(code: ErrorCode): string {
  return `urn:pitcrew:problem:${code.replace('PITCREW_ERR_', '').toLowerCase().replaceAll('_', '-')}`;
}

export function notFound(what: string, id: string): PitcrewError {
  return new PitcrewError('PITCREW_ERR_NOT_FOUND', `${what} ${id} does not exist in this tenant`);
}
