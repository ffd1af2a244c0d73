import type { FieldError } from '../../errors/catalogue.js';
import type { ImportNeeds } from '../import-needs.js';
import type { AlarmObservation, ImportPage, ImportRequest, Importer } from '../observation.js';
import { callJson, importSettingError, readCursor, toolRefused, writeCursor, type ToolCall } from '../tool-api.js';
import { isRecord } from '../values.js';
import { keystoneLoginErrors, KeystoneTokens } from './tokens.js';

/**
 * The import of a `monasca` integration (docs/incidents-import.md), read with a Keystone token
 * (keystone.ts: issued from the import's Keystone login, or the token the integration keeps):
 *
 * - `GET /v2.0/alarms` (openstack/monasca-api docs/monasca-api-spec.md "List Alarms": {links,
 *   elements:[{id, alarm_definition:{id, name, severity}, metrics:[{name, dimensions}], state,
 *   state_updated_timestamp, …}]}, paged by an integer offset in the `next` link), for every
 *   alarm's name, severity and host and its state now;
 * - `GET /v2.0/alarms/state-history?start_time=…&offset=…` ("List Alarms State History":
 *   {links, elements:[{id, alarm_id, metrics, old_state, new_state, reason, timestamp, …}]},
 *   oldest first, paged by the last element's id, a time in ms), one page per ImportPage: ALARM
 *   fires the alarm at the transition's time, OK resolves it, UNDETERMINED (no data) says nothing.
 *
 * Once the history is read to its end, alarms in ALARM that the history did not show firing (they
 * went to ALARM before the look-back) fire at their state_updated_timestamp, and the page names
 * every alarm in ALARM (`openKeys`): an incident of an alarm no longer in ALARM resolves. The key
 * is the alarm id, as the webhook's alarm_id. Nothing is written to Monasca: GETs only, and the
 * token request to Keystone.
 */
export class MonascaImporter implements Importer {
  /** One token request per import, not per page. */
  private readonly tokens = new KeystoneTokens('import');

  async importPage(request: ImportRequest): Promise<ImportPage> {
    const root = monascaRoot(request.config.monascaUrl);
    const cursor = readCursor(TOOL, request.cursor, isCursor) ?? {};
    return this.tokens.withToken(request, async (token) => {
      const monasca = (url: string): ToolCall => ({ tool: TOOL, url, headers: { 'x-auth-token': token }, secrets: [token] });
      const alarms = await listAlarms(request, root, monasca);
      const params = new URLSearchParams({ start_time: new Date(request.since).toISOString(), limit: String(HISTORY_PAGE) });
      if (cursor.offset !== undefined) params.set('offset', cursor.offset);
      const page = await elements(request, monasca(`${root}/v2.0/alarms/state-history?${params}`));
      const open = new Set(cursor.open ?? []);
      const observations: AlarmObservation[] = [];
      for (const transition of page.elements) {
        const alarmId = typeof transition.alarm_id === 'string' ? transition.alarm_id : undefined;
        const at = typeof transition.timestamp === 'string' ? Date.parse(transition.timestamp) : Number.NaN;
        if (!alarmId || Number.isNaN(at)) continue;
        const state = transition.new_state === 'ALARM' ? 'firing' : transition.new_state === 'OK' ? 'resolved' : undefined;
        if (!state) continue;
        const alarm = alarms.get(alarmId) ?? alarmOf(alarmId, transition.metrics, undefined);
        observations.push({ incidentKey: alarmId, alarmName: alarm.name, hostname: alarm.hostname, severity: alarm.severity, state, at });
        if (state === 'firing') open.add(alarmId);
        else open.delete(alarmId);
      }
      const last = page.elements[page.elements.length - 1];
      const offset = page.nextOffset ?? (typeof last?.id === 'string' ? last.id : cursor.offset);
      if (page.nextOffset !== undefined && page.nextOffset !== cursor.offset) {
        return { observations, cursor: writeCursor({ offset, open: [...open] }), more: true };
      }
      // The history is read: what Monasca has in ALARM now is what is open.
      const alarming = [...alarms.values()].filter((alarm) => alarm.state === 'ALARM');
      for (const alarm of alarming) {
        if (open.has(alarm.id)) continue;
        observations.push({ incidentKey: alarm.id, alarmName: alarm.name, hostname: alarm.hostname, severity: alarm.severity, state: 'firing', at: alarm.stateUpdatedAt });
      }
      return { observations, openKeys: alarming.map((alarm) => alarm.id), cursor: writeCursor({ offset, open: alarming.map((alarm) => alarm.id) }), more: false };
    });
  }
}

const TOOL = 'Monasca';
/** State transitions per page; alarms per list call. */
const HISTORY_PAGE = 1000;
const ALARMS_PAGE = 1000;
/** A loop guard on the alarm list, not a quota: 100,000 alarms. */
const MAX_ALARM_PAGES = 100;

interface Alarm {
  id: string;
  name: string;
  severity: string | null;
  hostname: string | null;
  state: string | undefined;
  stateUpdatedAt: number | null;
}

interface Cursor {
  /** The state history's offset: the id (ms) of the last transition read. */
  offset?: string;
  /** Alarms in ALARM as far as the import has taken them. */
  open?: string[];
}

async function listAlarms(request: ImportRequest, root: string, monasca: (url: string) => ToolCall): Promise<Map<string, Alarm>> {
  const alarms = new Map<string, Alarm>();
  let offset: string | undefined;
  for (let page = 0; page < MAX_ALARM_PAGES; page++) {
    const params = new URLSearchParams({ limit: String(ALARMS_PAGE) });
    if (offset !== undefined) params.set('offset', offset);
    const answer = await elements(request, monasca(`${root}/v2.0/alarms?${params}`));
    for (const element of answer.elements) {
      if (typeof element.id !== 'string') continue;
      const stateAt = typeof element.state_updated_timestamp === 'string' ? Date.parse(element.state_updated_timestamp) : Number.NaN;
      alarms.set(element.id, { ...alarmOf(element.id, element.metrics, element.alarm_definition), state: typeof element.state === 'string' ? element.state : undefined, stateUpdatedAt: Number.isNaN(stateAt) ? null : stateAt });
    }
    if (answer.nextOffset === undefined || answer.nextOffset === offset || answer.elements.length === 0) return alarms;
    offset = answer.nextOffset;
  }
  throw toolRefused(monasca(`${root}/v2.0/alarms`), `a next page after ${MAX_ALARM_PAGES} pages of alarms: its paging links loop`);
}

/** An alarm's name, severity and host: its definition's, and the `hostname` dimension of its first metric that has one. */
function alarmOf(id: string, metrics: unknown, definition: unknown): Alarm {
  let hostname: string | null = null;
  let metricName: string | undefined;
  for (const metric of Array.isArray(metrics) ? metrics : []) {
    if (!isRecord(metric)) continue;
    metricName ??= typeof metric.name === 'string' ? metric.name : undefined;
    if (hostname === null && isRecord(metric.dimensions) && typeof metric.dimensions.hostname === 'string') hostname = metric.dimensions.hostname;
  }
  const name = isRecord(definition) && typeof definition.name === 'string' ? definition.name : metricName ?? `alarm ${id}`;
  const severity = isRecord(definition) && typeof definition.severity === 'string' ? definition.severity : null;
  return { id, name, severity, hostname, state: undefined, stateUpdatedAt: null };
}

/** A list call's elements, and the offset of its next page (Monasca pages by the `next` link). */
async function elements(request: ImportRequest, call: ToolCall): Promise<{ elements: Record<string, unknown>[]; nextOffset: string | undefined }> {
  const answer = await callJson(request, call);
  if (!isRecord(answer) || !Array.isArray(answer.elements)) {
    throw toolRefused(call, 'an answer without an elements list: is monascaUrl the Monasca API (port 8070 by default)?');
  }
  let nextOffset: string | undefined;
  for (const link of Array.isArray(answer.links) ? answer.links : []) {
    // The next link names the host the API believes it has (often an internal one): only its offset is taken.
    if (isRecord(link) && link.rel === 'next' && typeof link.href === 'string' && URL.canParse(link.href)) nextOffset = new URL(link.href).searchParams.get('offset') ?? undefined;
  }
  return { elements: answer.elements.filter(isRecord), nextOffset };
}

function monascaRoot(value: unknown): string {
  if (typeof value !== 'string' || !URL.canParse(value)) throw importSettingError(TOOL, 'monascaUrl', 'monascaUrl must be the Monasca API’s address (e.g. http://monasca:8070)');
  const url = new URL(value);
  return `${url.origin}${url.pathname.replace(/\/+$/, '').replace(/\/v2\.0$/, '')}`;
}

function isCursor(state: Record<string, unknown>): state is Record<string, unknown> & Cursor {
  return (state.offset === undefined || typeof state.offset === 'string') && (state.open === undefined || (Array.isArray(state.open) && state.open.every((id) => typeof id === 'string')));
}

export const monascaImportNeeds: ImportNeeds = {
  tool: 'Monasca',
  secretShape: 'a Keystone login {"version": "v3", "identityUrl", "username", "password", "project"} (a token is asked for as needed), or the token kept on the integration',
  credentialProviders: [],
  integrationSecret: true,
  secretErrors(secret, at) {
    if (typeof secret === 'string') return [];
    if (!isRecord(secret)) return [{ path: at, message: 'a Monasca import reads with a Keystone token (a string) or a Keystone login {version, identityUrl, username, password, project, …}' }];
    return keystoneLoginErrors(secret, at);
  },
  settingsErrors({ config, hasSecret, integrationHasSecret }) {
    const errors: FieldError[] = [];
    if (typeof config.monascaUrl !== 'string') errors.push({ path: '/body/config/monascaUrl', message: 'an import reads the Monasca API at config.monascaUrl (e.g. http://monasca:8070): set it in the integration’s config' });
    if (!hasSecret && !integrationHasSecret) {
      errors.push({ path: '/body/import/secret', message: 'an import needs a Keystone login as its secret (a new token is asked for as needed), or a token kept on the integration (POST …/monasca/token)' });
    }
    return errors;
  },
  readOnlyCall(method, url) {
    // Keystone's token request: it reads nothing of Monasca and changes nothing there.
    return method === 'POST' && /\/(v2\.0\/tokens|v3\/auth\/tokens)$/.test(url.pathname);
  },
};
