import { createHash, timingSafeEqual } from 'node:crypto';
import type { FieldError } from '../errors/catalogue.js';
import type { ToolRequest } from './notification.js';

/** The header a tool that cannot sign sends the integration's secret in, unless the integration names another. */
export const DEFAULT_SECRET_HEADER = 'x-pitcrew-secret';

/** A header's value as one string (the first when repeated), or undefined. */
export function headerValue(headers: ToolRequest['headers'], name: string): string | undefined {
  const value = headers[name.toLowerCase()];
  return Array.isArray(value) ? value[0] : value;
}

/**
 * Compares two secrets in constant time. Both sides are hashed first so that a secret of another
 * length is rejected without timingSafeEqual throwing, and without the time telling the length.
 */
export function sameSecret(given: string, expected: string): boolean {
  const a = createHash('sha256').update(given, 'utf8').digest();
  const b = createHash('sha256').update(expected, 'utf8').digest();
  return timingSafeEqual(a, b);
}

/**
 * For tools that do not sign their bodies (Datadog, Zabbix): when the integration has a secret, the
 * tool must send it in a custom header (config `secretHeader`, default X-Pitcrew-Secret). Returns
 * the error to report, or undefined when the request may go on. The message never echoes a secret.
 */
export function checkSecretHeader(request: ToolRequest, tool: string): FieldError | undefined {
  if (request.secret === undefined) return undefined;
  const configured = request.config.secretHeader;
  const name = (typeof configured === 'string' && configured.trim() !== '' ? configured.trim() : DEFAULT_SECRET_HEADER).toLowerCase();
  const given = headerValue(request.headers, name);
  if (given === undefined || given === '') {
    return { path: `/headers/${name}`, message: `This integration has a secret: ${tool} must send it in the ${name} header (add it as a custom header in ${tool}), and this request has no ${name} header` };
  }
  if (!sameSecret(given, request.secret)) {
    return { path: `/headers/${name}`, message: `The ${name} header does not match this integration's secret: copy the secret again into ${tool}'s custom header` };
  }
  return undefined;
}
