import type { ToolNotification } from './notification.js';

/*
 * How every tool's parser reads values: one way to tell an object, write a label as text, and
 * refuse a body.
 */

export function isRecord(value: unknown): value is Record<string, unknown> {
  return typeof value === 'object' && value !== null && !Array.isArray(value);
}

/** Label values are text: strings as they are, numbers and booleans printed, anything else JSON-encoded. */
export function labelText(value: unknown): string | undefined {
  if (value === undefined || value === null) return undefined;
  if (typeof value === 'string') return value;
  if (typeof value === 'number' || typeof value === 'boolean') return String(value);
  return JSON.stringify(value);
}

/** A body refused at one field. */
export function invalid(path: string, message: string): ToolNotification {
  return { kind: 'invalid', errors: [{ path, message }] };
}
