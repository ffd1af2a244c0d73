import { describe, expect, it } from 'vitest';
import type { AlarmObservation } from '../integrations/observation.js';
import type { IncidentRow } from '../store/schema.js';
import { IncidentBook, LISTED_EXECUTIONS, type Sighting } from './book.js';

const T = 1_800_000_000_000;
const MIN = 60_000;
const settings = () => ({ automationMs: 60 * MIN, quietMs: 30 * MIN });

function observation(state: 'firing' | 'resolved', at: number | null, key = 'k'): AlarmObservation {
  return { incidentKey: key, alarmName: 'DiskFull', hostname: 'Web-1', severity: 'critical', state, at };
}
const alert = (state: 'firing' | 'resolved', at: number | null, fingerprint: string, receivedAt = T): Sighting => ({
  tenantId: 't', integrationId: 'i', observation: observation(state, at), receivedAt, repeat: { by: 'notification', fingerprint },
});
const call = (receivedAt: number): Sighting => ({ tenantId: 't', integrationId: null, observation: observation('firing', null, 'w'), receivedAt, repeat: { by: 'call' } });

function only(book: IncidentBook): IncidentRow {
  const { inserts, touched, resolving } = book.changes();
  const rows = [...inserts, ...touched, ...resolving];
  expect(rows).toHaveLength(1);
  return rows[0]!;
}

describe('IncidentBook', () => {
  it('a notification re-sent (same fingerprint, same tool time) is not another occurrence; a new firing within the open incident is', () => {
    const book = new IncidentBook([], settings);
    const id = book.sight(alert('firing', T, 'f1'));
    expect(book.sight(alert('firing', T, 'f1', T + MIN))).toBe(id);
    expect(only(book)).toMatchObject({ occurrences: 1, opened_at: T, host_key: 'web-1', last_seen_at: T + MIN });
    expect(book.sight(alert('firing', T + 5 * MIN, 'f2', T + 6 * MIN))).toBe(id);
    expect(only(book)).toMatchObject({ occurrences: 2, last_fired_at: T + 5 * MIN, last_fingerprint: 'f2' });
    // An older notification arriving late counts nothing either.
    book.sight(alert('firing', T + MIN, 'f0', T + 7 * MIN));
    expect(only(book).occurrences).toBe(2);
  });

  it('without the tool\'s time, the fingerprint alone tells a repeat; after the resolution too', () => {
    const book = new IncidentBook([], settings);
    const id = book.sight(alert('firing', null, 'z:1:firing', T));
    book.sight(alert('firing', null, 'z:1:firing', T + MIN));
    book.sight(alert('resolved', null, 'z:1:resolved', T + 10 * MIN));
    // Zabbix's repeat of the problem's notification, late: still the same incident, nothing new opened.
    expect(book.sight(alert('firing', null, 'z:1:firing', T + 11 * MIN))).toBe(id);
    expect(only(book)).toMatchObject({ state: 'resolved', occurrences: 1, opened_at: T, resolved_at: T + 10 * MIN, resolved_by: 'tool' });
  });

  it('a resolution within the automation window after a pitcrew fix is automation\'s; later, or before the fix, the tool\'s', () => {
    const open = (id: string, fixAt: number | null): IncidentRow => ({
      id, tenant_id: 't', integration_id: 'i', incident_key: id, state: 'open', alarm_name: 'a', severity: null, hostname: null, host_key: '',
      opened_at: T, resolved_at: null, last_seen_at: T, last_fired_at: T, last_fingerprint: 'f', occurrences: 1, resolved_by: null,
      resolved_by_user: null, last_fix_at: fixAt, rule_ids: '[]', execution_ids: '[]', execution_count: 0,
    last_alert_id: null, alert_count: 0, last_event_id: null, event_count: 0,
    });
    const book = new IncidentBook([open('fixed', T + MIN), open('late', T + MIN), open('unfixed', null), open('after', T + 20 * MIN)], settings);
    const resolve = (key: string, at: number) => book.sight({ ...alert('resolved', at, 'r'), observation: { ...observation('resolved', at, key) } });
    resolve('fixed', T + 61 * MIN);
    resolve('late', T + 62 * MIN);
    resolve('unfixed', T + 2 * MIN);
    resolve('after', T + 10 * MIN);
    const by = Object.fromEntries(book.changes().resolving.map((r) => [r.id, r.resolved_by]));
    expect(by).toEqual({ fixed: 'automation', late: 'tool', unfixed: 'tool', after: 'tool' });
  });

  it('a webhook alarm: every call an occurrence; quiet past the tenant\'s period, the next call opens another incident', () => {
    const book = new IncidentBook([], settings);
    const first = book.sight(call(T));
    expect(book.sight(call(T + 10 * MIN))).toBe(first);
    expect(book.sight(call(T + 39 * MIN))).toBe(first);
    const second = book.sight(call(T + 70 * MIN));
    expect(second).not.toBe(first);
    const rows = book.changes().inserts;
    expect(rows.map((r) => [r.state, r.opened_at, r.resolved_at, r.occurrences, r.resolved_by])).toEqual([
      ['resolved', T, T + 39 * MIN, 3, 'tool'],
      ['open', T + 70 * MIN, null, 1, null],
    ]);
  });

  it('keeps the rules and the first executions of its events, and counts them all', () => {
    const book = new IncidentBook([], settings);
    const id = book.sight(alert('firing', T, 'f'))!;
    book.link(id, ['r1'], Array.from({ length: 70 }, (_, i) => `e${i}`));
    book.link(id, ['r1', 'r2'], Array.from({ length: 70 }, (_, i) => `e${70 + i}`));
    const row = only(book);
    expect(JSON.parse(row.rule_ids)).toEqual(['r1', 'r2']);
    expect(JSON.parse(row.execution_ids)).toHaveLength(LISTED_EXECUTIONS);
    expect(row.execution_count).toBe(140);
  });

  it('the same key in another integration or tenant is another alarm', () => {
    const book = new IncidentBook([], settings);
    const a = book.sight(alert('firing', T, 'f'));
    const b = book.sight({ ...alert('firing', T, 'f'), integrationId: 'other' });
    const c = book.sight({ ...alert('firing', T, 'f'), tenantId: 'other' });
    expect(new Set([a, b, c]).size).toBe(3);
  });
});
