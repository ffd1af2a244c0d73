import type { FieldError } from '../../errors/catalogue.js';
import { missingSecret, urlSettingErrors, type ImportNeeds } from '../import-needs.js';
import { isRecord } from '../values.js';

/** A Datadog import (docs/incidents-import.md#datadog): an API key and an application key scoped to monitors_read and events_read; GETs only. */
export const datadogImportNeeds: ImportNeeds = {
  tool: 'Datadog',
  credentialProviders: [],
  integrationSecret: false,
  secretErrors(secret, at): FieldError[] {
    const text = (value: unknown) => typeof value === 'string' && value.trim() !== '';
    if (isRecord(secret) && text(secret.apiKey) && text(secret.applicationKey)) return [];
    return [{ path: at, message: 'a Datadog import reads with {"apiKey": "…", "applicationKey": "…"} (an application key scoped to monitors_read and events_read)' }];
  },
  settingsErrors: (input) => [
    ...urlSettingErrors(input.config, 'apiUrl', 'the http(s) URL of the Datadog API, e.g. https://api.datadoghq.eu', false),
    ...missingSecret(input, 'Datadog keys {"apiKey", "applicationKey"}'),
  ],
};
