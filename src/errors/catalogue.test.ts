import fs from 'node:fs';
import { STATUS_CODES } from 'node:http';
import { fileURLToPath } from 'node:url';
import { describe, expect, it } from 'vitest';
import { PitcrewError, errorCatalogue, notFound, problemType, type ErrorCode } from './catalogue.js';

const codes = Object.keys(errorCatalogue) as ErrorCode[];
const DOCS = fileURLToPath(new URL('../../docs/errors.md', import.meta.url));

describe('the error catalogue', () => {
  it('names every code PITCREW_ERR_<WORDS>', () => {
    for (const code of codes) expect(code).toMatch(/^PITCREW_ERR_[A-Z]+(_[A-Z]+)*$/);
  });

  it('gives every code its own problem type and title, so clients can tell them apart', () => {
    expect(new Set(codes.map(problemType)).size).toBe(codes.length);
    expect(new Set(codes.map((code) => errorCatalogue[code].title)).size).toBe(codes.length);
    for (const code of codes) expect(problemType(code)).toMatch(/^urn:pitcrew:problem:[a-z]+(-[a-z]+)*$/);
  });

  it('gives every code an HTTP error status, and a PitcrewError carries it', () => {
    for (const code of codes) {
      const { status } = errorCatalogue[code];
      expect(status, code).toBeGreaterThanOrEqual(400);
      expect(status, code).toBeLessThan(600);
      expect(STATUS_CODES[status], `${code}: ${status} is not a standard status`).toBeDefined();
      const error = new PitcrewError(code, 'what to do about it');
      expect(error).toBeInstanceOf(Error);
      expect(error).toMatchObject({ code, status, message: 'what to do about it', name: 'PitcrewError' });
    }
  });

  // DESIGN.md §3 fixes these replies of the webhook trigger; the management API uses the same codes.
  it.each<[ErrorCode, number]>([
    ['PITCREW_ERR_MALFORMED_JSON', 400],
    ['PITCREW_ERR_VALIDATION', 400],
    ['PITCREW_ERR_BAD_CURSOR', 400],
    ['PITCREW_ERR_UNAUTHENTICATED', 401],
    ['PITCREW_ERR_INVALID_API_KEY', 401],
    ['PITCREW_ERR_IP_NOT_ALLOWED', 403],
    ['PITCREW_ERR_NOT_FOUND', 404],
    ['PITCREW_ERR_TRIGGER_NOT_FOUND', 404],
    ['PITCREW_ERR_CONFLICT', 409],
    ['PITCREW_ERR_BODY_TOO_LARGE', 413],
    ['PITCREW_ERR_UNSUPPORTED_MEDIA_TYPE', 415],
    ['PITCREW_ERR_IDEMPOTENCY_KEY_REUSED', 422],
    ['PITCREW_ERR_THROTTLED', 429],
    ['PITCREW_ERR_INTERNAL', 500],
    ['PITCREW_ERR_CHANNEL_DELIVERY_FAILED', 502],
    ['PITCREW_ERR_STORAGE_UNAVAILABLE', 503],
  ])('%s is %i, as the contract says', (code, status) => {
    expect(errorCatalogue[code].status).toBe(status);
  });

  // A receiver refusing a test message is a peer's failure (502 Bad Gateway), not the user's nor ours.
  it('keeps user errors (4xx) apart from the service’s and its peers’ (5xx): only these are 5xx', () => {
    expect(codes.filter((code) => errorCatalogue[code].status >= 500).sort()).toEqual(['PITCREW_ERR_CHANNEL_DELIVERY_FAILED', 'PITCREW_ERR_INTERNAL', 'PITCREW_ERR_NOT_IMPLEMENTED', 'PITCREW_ERR_PROVIDER_REFUSED', 'PITCREW_ERR_PROVIDER_UNAVAILABLE', 'PITCREW_ERR_STOPPING', 'PITCREW_ERR_STORAGE_UNAVAILABLE', 'PITCREW_ERR_TOOL_REFUSED', 'PITCREW_ERR_TOOL_UNAVAILABLE']);
  });

  it('carries field errors and headers through', () => {
    const error = new PitcrewError('PITCREW_ERR_THROTTLED', 'slow down', { headers: { 'Retry-After': '3' }, fieldErrors: [{ path: '/body/x', message: 'no' }] });
    expect(error.headers).toEqual({ 'Retry-After': '3' });
    expect(error.fieldErrors).toEqual([{ path: '/body/x', message: 'no' }]);
  });

  it('says what was not found, and where', () => {
    const error = notFound('rule', '0190c1a8-0000-7000-8000-000000000000');
    expect(error).toMatchObject({ code: 'PITCREW_ERR_NOT_FOUND', status: 404 });
    expect(error.message).toBe('rule 0190c1a8-0000-7000-8000-000000000000 does not exist in this tenant');
  });

  describe('docs/errors.md', () => {
    const docs = () => fs.readFileSync(DOCS, 'utf8');

    it.each(codes)('documents %s', (code) => {
      expect(docs()).toMatch(new RegExp(`\\b${code}\\b`));
    });

    it('documents no code the catalogue does not have', () => {
      const documented = new Set(docs().match(/\bPITCREW_ERR_[A-Z0-9_]*[A-Z0-9]\b/g) ?? []);
      expect([...documented].filter((code) => !(code in errorCatalogue))).toEqual([]);
    });
  });
});
