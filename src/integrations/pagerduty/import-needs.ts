import { missingSecret, stringSecretErrors, urlSettingErrors, type ImportNeeds } from '../import-needs.js';

/** A PagerDuty import (docs/incidents-import.md#pagerduty): a read-only REST API key; GETs only. */
export const pagerdutyImportNeeds: ImportNeeds = {
  tool: 'PagerDuty',
  secretShape: 'a read-only REST API key (Integrations → API Access Keys), as a string',
  credentialProviders: [],
  integrationSecret: false,
  secretErrors: (secret, at) => stringSecretErrors(secret, at, 'a PagerDuty read-only REST API key'),
  settingsErrors: (input) => [
    ...urlSettingErrors(input.config, 'apiUrl', 'the http(s) URL of the PagerDuty REST API: https://api.pagerduty.com, or https://api.eu.pagerduty.com', false),
    ...missingSecret(input, 'a PagerDuty read-only REST API key'),
  ],
};
