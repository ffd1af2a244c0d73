import { missingSecret, stringSecretErrors, urlSettingErrors, type ImportNeeds } from '../import-needs.js';

/** The JSON-RPC methods a Zabbix import sends (zabbix/import.ts): reads only. */
const READ_METHODS = new Set(['apiinfo.version', 'problem.get', 'event.get']);

/** A Zabbix import (docs/incidents-import.md#zabbix): the frontend's URL, an API token; JSON-RPC reads only. */
export const zabbixImportNeeds: ImportNeeds = {
  tool: 'Zabbix',
  secretShape: 'a Zabbix API token (Users → API tokens), as a string',
  credentialProviders: [],
  integrationSecret: false,
  secretErrors: (secret, at) => stringSecretErrors(secret, at, 'a Zabbix API token'),
  settingsErrors: (input) => [
    ...urlSettingErrors(input.config, 'zabbixUrl', 'the http(s) URL of the Zabbix frontend, e.g. https://zabbix.example.com/zabbix', true),
    ...missingSecret(input, 'a Zabbix API token (Users → API tokens)'),
  ],
  readOnlyCall(method, url, body) {
    // Every Zabbix API call is a POST to api_jsonrpc.php: the method in the body says whether it reads.
    if (method !== 'POST' || !url.pathname.endsWith('/api_jsonrpc.php') || body === undefined) return false;
    try {
      const call = JSON.parse(body) as { method?: unknown };
      return typeof call.method === 'string' && READ_METHODS.has(call.method);
    } catch {
      return false;
    }
  },
};
