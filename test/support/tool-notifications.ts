import { expect } from 'vitest';
import type { FieldError } from '../../src/errors/catalogue.js';
import type { ToolAlert, ToolNotification } from '../../src/integrations/notification.js';

/** The alerts a tool's parser read; anything else it answered fails the test, shown whole. */
export function alertsOf(result: ToolNotification): ToolAlert[] {
  if (result.kind !== 'alerts') throw new Error(`expected alerts, got ${JSON.stringify(result)}`);
  return result.alerts;
}

/** The one alert a tool's parser read. */
export function alertOf(result: ToolNotification): ToolAlert {
  const alerts = alertsOf(result);
  expect(alerts).toHaveLength(1);
  return alerts[0]!;
}

/** Why a tool's parser refused a notification; anything else it answered fails the test, shown whole. */
export function errorsOf(result: ToolNotification): FieldError[] {
  if (result.kind !== 'invalid') throw new Error(`expected invalid, got ${JSON.stringify(result)}`);
  return result.errors;
}
