import type { FieldError } from '../../errors/catalogue.js';
import { missingSecret, urlSettingErrors, type ImportNeeds } from '../import-needs.js';
import { isRecord } from '../values.js';

/** The Datadog sites (docs.datadoghq.com/getting_started/site): datadoghq.com, us3/us5.datadoghq.com, datadoghq.eu, ap1/ap2.datadoghq.com, ddog-gov.com. */
export const DATADOG_SITE = /^(?:[a-z0-9-]+\.)*(?:datadoghq\.com|datadoghq\.eu|ddog-gov\.com)$/;
export const SITE_MESSAGE = 'site must be your Datadog site as it shows in the address bar: datadoghq.com, datadoghq.eu, us3.datadoghq.com, us5.datadoghq.com, ap1.datadoghq.com, ap2.datadoghq.com, ddog-gov.com';

/** A Datadog import (docs/incidents-import.md#datadog): an API key and an application key scoped to monitors_read and events_read; GETs only. */
export const datadogImportNeeds: ImportNeeds = {
  tool: 'Datadog',
  secretShape: '{"apiKey", "applicationKey"}: an application key scoped to monitors_read and events_read',
  credentialProviders: [],
  integrationSecret: false,
  secretErrors(secret, at): FieldError[] {
    const text = (value: unknown) => typeof value === 'string' && value.trim() !== '';
    if (isRecord(secret) && text(secret.apiKey) && text(secret.applicationKey)) return [];
    return [{ path: at, message: 'a Datadog import reads with {"apiKey": "…", "applicationKey": "…"} (an application key scoped to monitors_read and events_read)' }];
  },
  settingsErrors: (input) => [
    ...urlSettingErrors(input.config, 'apiUrl', 'the http(s) URL of the Datadog API, e.g. https://api.datadoghq.eu', false),
    // The site names the API's address when apiUrl does not (datadog/import.ts): a site that is not Datadog's is refused at set-up, not at the first import.
    ...(input.config.apiUrl === undefined && input.config.site !== undefined && !(typeof input.config.site === 'string' && DATADOG_SITE.test(input.config.site.trim().toLowerCase()))
      ? [{ path: '/body/config/site', message: SITE_MESSAGE }] : []),
    ...missingSecret(input, 'Datadog keys {"apiKey", "applicationKey"}'),
  ],
};
