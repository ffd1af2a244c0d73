/*
 * Sources:
 * - The macros and what they hold: Zabbix manual "Supported macros"
 *   (zabbix.com/documentation/6.0/en/manual/appendix/macros/supported_by_location): {EVENT.VALUE} 1
 *   problem / 0 recovery, {EVENT.ID} the problem event (also in its recovery notification, as Zabbix's
 *   own media types print "Original problem ID: {EVENT.ID}" in the RECOVERY template),
 *   {EVENT.RECOVERY.ID}, {EVENT.TAGSJSON} = [{"tag":...,"value":...}], {EVENT.UPDATE.STATUS} 1 for a
 *   problem update, {EVENT.SOURCE} 0 for triggers; an unresolved macro stays as its own text.
 * - The media type format and the webhook script API (JSON.parse(value), HttpRequest.addHeader/post/
 *   getStatus, Zabbix.log): zabbix/zabbix templates/media/opsgenie/media_opsgenie.yaml and
 *   templates/media/pushover/media_pushover.yaml (6.x export).
 * The bodies are those the shipped media-type.yaml script posts: the tests run that script, with the
 * macros resolved as Zabbix would, and parse what it sends.
 */
import { readFileSync } from 'node:fs';
import { describe, expect, it } from 'vitest';
import { alertOf } from '../../../test/support/tool-notifications.js';
import type { ToolRequest } from '../notification.js';
import { parseZabbix } from './parse.js';

const MEDIA_TYPE = readFileSync(new URL('./media-type.yaml', import.meta.url), 'utf8');

/** The script block and the parameters of the export, read the way this file is laid out. */
function mediaType(): { script: string; parameters: Array<{ name: string; value: string }> } {
  const lines = MEDIA_TYPE.split('\n');
  const start = lines.indexOf('      script: |');
  const script: string[] = [];
  for (const line of lines.slice(start + 1)) {
    if (line !== '' && !line.startsWith('        ')) break;
    script.push(line.slice(8));
  }
  const parameters = [...MEDIA_TYPE.matchAll(/^ {8}- name: (\S+)\n {10}value: '(.*)'$/gm)].map((m) => ({ name: m[1]!, value: m[2]!.replaceAll("''", "'") }));
  return { script: script.join('\n'), parameters };
}

/** Runs the media type's script as Zabbix would: parameters with their macros resolved, as a JSON `value`. */
function send(macros: Record<string, string>, overrides: Record<string, string> = {}): { url: string; headers: string[]; body: string } {
  const { script, parameters } = mediaType();
  const params: Record<string, string> = {};
  for (const { name, value } of parameters) {
    // Zabbix replaces the macros it knows and leaves the others as they are.
    params[name] = overrides[name] ?? value.replace(/\{[A-Z0-9_.$]+\}/g, (macro) => macros[macro] ?? macro);
  }
  let sent: { url: string; headers: string[]; body: string } | undefined;
  class HttpRequest {
    headers: string[] = [];
    addHeader(header: string): void {
      this.headers.push(header);
    }
    setProxy(): void {}
    post(url: string, body: string): string {
      sent = { url, headers: this.headers, body };
      return '{"eventId":"e1"}';
    }
    getStatus(): number {
      return 202;
    }
  }
  const Zabbix = { log: (): void => undefined };
  const result = new Function('value', 'HttpRequest', 'Zabbix', script)(JSON.stringify(params), HttpRequest, Zabbix) as unknown;
  expect(result).toBe('OK');
  if (!sent) throw new Error('the script sent nothing');
  return sent;
}

const URL_OF_INTEGRATION = 'https://pitcrew.example/api/v1/trigger/channel/zabbix/pk_live_x/int_1';

/** A problem on a Linux host, as Zabbix resolves the macros of a trigger-based notification. */
const PROBLEM: Record<string, string> = {
  '{EVENT.SOURCE}': '0',
  '{EVENT.VALUE}': '1',
  '{EVENT.UPDATE.STATUS}': '0',
  '{EVENT.UPDATE.ACTION}': '',
  '{EVENT.ID}': '4242',
  '{EVENT.NAME}': 'Linux: High CPU utilization (over 90% for 5m)',
  '{EVENT.SEVERITY}': 'Warning',
  '{EVENT.NSEVERITY}': '2',
  '{EVENT.DATE}': '2024.06.10',
  '{EVENT.TIME}': '10:15:00',
  '{EVENT.OPDATA}': 'Current utilization: 97.2 %',
  '{EVENT.TAGSJSON}': '[{"tag":"class","value":"os"},{"tag":"component","value":"cpu"},{"tag":"scope","value":"performance"},{"tag":"service","value":"mysql"},{"tag":"service","value":"nginx"}]',
  '{HOST.HOST}': 'web-01.prod',
  '{HOST.NAME}': 'Web server 01',
  '{HOST.IP}': '10.0.0.11',
  '{TRIGGER.ID}': '23456',
  '{ITEM.LASTVALUE}': '97.2 %',
  '{$ZABBIX.URL}': 'https://zabbix.example/',
};

const RECOVERY: Record<string, string> = {
  ...PROBLEM,
  '{EVENT.VALUE}': '0',
  '{EVENT.RECOVERY.ID}': '4250',
  '{EVENT.RECOVERY.DATE}': '2024.06.10',
  '{EVENT.RECOVERY.TIME}': '10:31:00',
};

function request(sent: { headers: string[]; body: string }, extra: Partial<ToolRequest> = {}): ToolRequest {
  const headers: Record<string, string> = {};
  for (const header of sent.headers) {
    const colon = header.indexOf(':');
    headers[header.slice(0, colon).trim().toLowerCase()] = header.slice(colon + 1).trim();
  }
  return { rawBody: sent.body, body: JSON.parse(sent.body) as unknown, headers, config: {}, secret: undefined, now: Date.now(), ...extra };
}

describe('the Zabbix media type', () => {
  it('posts JSON to the pitcrew_url parameter, unresolved macros sent empty', () => {
    const sent = send(PROBLEM, { pitcrew_url: URL_OF_INTEGRATION });
    expect(sent.url).toBe(URL_OF_INTEGRATION);
    expect(sent.headers).toEqual(['Content-Type: application/json']);
    const body = JSON.parse(sent.body) as Record<string, unknown>;
    expect(body).toMatchObject({ pitcrew_media_type: '1', event_id: '4242', event_value: '1', host_host: 'web-01.prod', event_recovery_id: '' });
    expect(body.event_tags).toContainEqual({ tag: 'component', value: 'cpu' });
  });

  it('refuses to run without a pitcrew_url, saying which parameter to set', () => {
    expect(() => send(PROBLEM)).toThrow(/"pitcrew_url" must be the URL pitcrew gave/);
  });

  it('sends the secret in X-Pitcrew-Secret when pitcrew_secret is set', () => {
    const sent = send(PROBLEM, { pitcrew_url: URL_OF_INTEGRATION, pitcrew_secret: 'zbx-secret' });
    expect(sent.headers).toContain('X-Pitcrew-Secret: zbx-secret');
  });
});

describe('parseZabbix', () => {
  it('reads a problem as firing: host from {HOST.HOST}, tags and event fields as labels', () => {
    const alert = alertOf(parseZabbix(request(send(PROBLEM, { pitcrew_url: URL_OF_INTEGRATION }))));
    expect(alert).toMatchObject({ state: 'firing', alarmName: 'Linux: High CPU utilization (over 90% for 5m)', severity: 'Warning', hostName: 'web-01.prod' });
    expect(alert.labels).toEqual({
      class: 'os',
      component: 'cpu',
      scope: 'performance',
      service: 'mysql,nginx',
      event_id: '4242',
      event_value: '1',
      event_severity: 'Warning',
      event_nseverity: '2',
      trigger_id: '23456',
      host_host: 'web-01.prod',
      host_name: 'Web server 01',
      host_ip: '10.0.0.11',
    });
    expect(alert.annotations).toMatchObject({ event_opdata: 'Current utilization: 97.2 %', item_lastvalue: '97.2 %', event_url: 'https://zabbix.example/tr_events.php?triggerid=23456&eventid=4242' });
  });

  it('reads the recovery as resolved under the same problem event id; a retry repeats the fingerprint', () => {
    const problem = alertOf(parseZabbix(request(send(PROBLEM, { pitcrew_url: URL_OF_INTEGRATION }))));
    const retry = alertOf(parseZabbix(request(send(PROBLEM, { pitcrew_url: URL_OF_INTEGRATION }))));
    const recovery = alertOf(parseZabbix(request(send(RECOVERY, { pitcrew_url: URL_OF_INTEGRATION }))));
    const next = alertOf(parseZabbix(request(send({ ...PROBLEM, '{EVENT.ID}': '4300' }, { pitcrew_url: URL_OF_INTEGRATION }))));
    expect(retry.fingerprint).toBe(problem.fingerprint);
    expect(recovery).toMatchObject({ state: 'resolved', labels: { event_id: '4242', event_recovery_id: '4250' } });
    expect(new Set([problem.fingerprint, recovery.fingerprint, next.fingerprint]).size).toBe(3);
  });

  // Issue 38: the problem event is the incident; {EVENT.ID} names it in its recovery's notification
  // too (Zabbix manual, "Supported macros"), as problem.get's eventid does for an import. The body's
  // date and time carry no time zone: the incident takes the time pitcrew received them.
  it('gives the incident: the problem event id for key, in the problem and its recovery, and no time of its own', () => {
    const problem = alertOf(parseZabbix(request(send(PROBLEM, { pitcrew_url: URL_OF_INTEGRATION }))));
    const recovery = alertOf(parseZabbix(request(send(RECOVERY, { pitcrew_url: URL_OF_INTEGRATION }))));
    const next = alertOf(parseZabbix(request(send({ ...PROBLEM, '{EVENT.ID}': '4300' }, { pitcrew_url: URL_OF_INTEGRATION }))));
    expect([problem.incidentKey, problem.at]).toEqual(['4242', null]);
    expect([recovery.incidentKey, recovery.at]).toEqual(['4242', null]);
    expect(next.incidentKey).toBe('4300');
  });

  it('falls back to {HOST.NAME} when {HOST.HOST} is empty', () => {
    const alert = alertOf(parseZabbix(request(send({ ...PROBLEM, '{HOST.HOST}': '' }, { pitcrew_url: URL_OF_INTEGRATION }))));
    expect(alert.hostName).toBe('Web server 01');
  });

  it('records problem updates and non-trigger events as control, never acted on', () => {
    const update = send({ ...PROBLEM, '{EVENT.UPDATE.STATUS}': '1', '{EVENT.UPDATE.ACTION}': 'acknowledged' }, { pitcrew_url: URL_OF_INTEGRATION });
    expect(parseZabbix(request(update))).toEqual({ kind: 'control', description: 'Zabbix update of problem 4242 (acknowledged): recorded, not acted on' });
    const internal = send({ ...PROBLEM, '{EVENT.SOURCE}': '3' }, { pitcrew_url: URL_OF_INTEGRATION });
    expect(parseZabbix(request(internal))).toMatchObject({ kind: 'control', description: expect.stringContaining('internal event 4242') });
  });

  it('rejects bodies that are not from the media type, or with a broken event id or value', () => {
    expect(parseZabbix({ rawBody: '{}', body: { subject: 'Problem: x' }, headers: {}, config: {}, secret: undefined, now: 0 })).toEqual({ kind: 'invalid', errors: [{ path: '/body', message: expect.stringContaining('media-type.yaml') }] });
    const body = JSON.parse(send(PROBLEM, { pitcrew_url: URL_OF_INTEGRATION }).body) as Record<string, unknown>;
    const withBody = (b: unknown): ToolRequest => ({ rawBody: JSON.stringify(b), body: b, headers: {}, config: {}, secret: undefined, now: 0 });
    expect(parseZabbix(withBody({ ...body, event_id: '{EVENT.ID}' }))).toMatchObject({ kind: 'invalid', errors: [{ path: '/body/event_id' }] });
    expect(parseZabbix(withBody({ ...body, event_value: '2' }))).toMatchObject({ kind: 'invalid', errors: [{ path: '/body/event_value' }] });
    expect(parseZabbix(withBody({ ...body, event_tags: 'class:os' }))).toMatchObject({ kind: 'invalid', errors: [{ path: '/body/event_tags' }] });
  });
});

describe('parseZabbix: the shared secret', () => {
  it('accepts the secret the media type sends, rejects a wrong or missing one', () => {
    const secret = 'zbx-secret';
    expect(parseZabbix(request(send(PROBLEM, { pitcrew_url: URL_OF_INTEGRATION, pitcrew_secret: secret }), { secret })).kind).toBe('alerts');
    const wrong = parseZabbix(request(send(PROBLEM, { pitcrew_url: URL_OF_INTEGRATION, pitcrew_secret: 'old' }), { secret }));
    expect(wrong).toEqual({ kind: 'invalid', errors: [{ path: '/headers/x-pitcrew-secret', message: expect.stringContaining('does not match') }] });
    const missing = parseZabbix(request(send(PROBLEM, { pitcrew_url: URL_OF_INTEGRATION }), { secret }));
    expect(missing).toMatchObject({ kind: 'invalid', errors: [{ path: '/headers/x-pitcrew-secret' }] });
  });
});
