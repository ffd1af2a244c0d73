/*
 * Sources of the bodies and the signature scheme below:
 * - PagerDuty/developer-docs docs/webhooks/01-Overview.md (developer.pagerduty.com "V3 Webhooks
 *   overview"): the example incident.priority_updated body, verbatim, and the event types
 *   (incident.triggered/resolved/reopened/acknowledged..., service.updated).
 * - PagerDuty/developer-docs docs/webhooks/04-Signatures.md ("Verifying Signatures"):
 *   X-PagerDuty-Signature: v1=<hex HMAC-SHA256 of the body>, comma-separated when several secrets.
 * - The pagey.ping body as a public receiver's test records it (a C# xunit test found by code
 *   search): {"event":{"id":"01FKZOXA868SHYEE4DVNWB5P9W","event_type":"pagey.ping","resource_type":"pagey",...}}.
 */
import { createHmac } from 'node:crypto';
import { describe, expect, it } from 'vitest';
import { alertOf } from '../../../test/support/tool-notifications.js';
import type { ToolRequest } from '../notification.js';
import { parsePagerDuty } from './parse.js';

const SECRET = 'pd-subscription-secret-123';

function sign(rawBody: string, secret = SECRET): string {
  return `v1=${createHmac('sha256', secret).update(rawBody, 'utf8').digest('hex')}`;
}

function request(rawBody: string, extra: Partial<ToolRequest> = {}): ToolRequest {
  let body: unknown;
  try {
    body = JSON.parse(rawBody);
  } catch {
    body = undefined;
  }
  return { rawBody, body, headers: { 'x-pagerduty-signature': sign(rawBody) }, config: {}, secret: SECRET, now: Date.now(), ...extra };
}

/** The documented example, verbatim (01-Overview.md "Webhook Payload"). */
const PRIORITY_UPDATED = `{
  "event": {
    "id": "5ac64822-4adc-4fda-ade0-410becf0de4f",
    "event_type": "incident.priority_updated",
    "resource_type": "incident",
    "occurred_at": "2020-10-02T18:45:22.169Z",
    "agent": {
      "html_url": "https://acme.pagerduty.com/users/PLH1HKV",
      "id": "PLH1HKV",
      "self": "https://api.pagerduty.com/users/PLH1HKV",
      "summary": "Tenex Engineer",
      "type": "user_reference"
    },
    "client": {
      "name": "PagerDuty"
    },
    "data": {
      "id": "PGR0VU2",
      "type": "incident",
      "self": "https://api.pagerduty.com/incidents/PGR0VU2",
      "html_url": "https://acme.pagerduty.com/incidents/PGR0VU2",
      "number": 2,
      "status": "triggered",
      "incident_key": "d3640fbd41094207a1c11e58e46b1662",
      "created_at": "2020-04-09T15:16:27Z",
      "title": "A little bump in the road",
      "service": {
        "html_url": "https://acme.pagerduty.com/services/PF9KMXH",
        "id": "PF9KMXH",
        "self": "https://api.pagerduty.com/services/PF9KMXH",
        "summary": "API Service",
        "type": "service_reference"
      },
      "assignees": [
        {
          "html_url": "https://acme.pagerduty.com/users/PTUXL6G",
          "id": "PTUXL6G",
          "self": "https://api.pagerduty.com/users/PTUXL6G",
          "summary": "User 123",
          "type": "user_reference"
        }
      ],
      "escalation_policy": {
        "html_url": "https://acme.pagerduty.com/escalation_policies/PUS0KTE",
        "id": "PUS0KTE",
        "self": "https://api.pagerduty.com/escalation_policies/PUS0KTE",
        "summary": "Default",
        "type": "escalation_policy_reference"
      },
      "teams": [
        {
          "html_url": "https://acme.pagerduty.com/teams/PFCVPS0",
          "id": "PFCVPS0",
          "self": "https://api.pagerduty.com/teams/PFCVPS0",
          "summary": "Engineering",
          "type": "team_reference"
        }
      ],
      "priority": {
        "html_url": "https://acme.pagerduty.com/account/incident_priorities",
        "id": "PSO75BM",
        "self": "https://api.pagerduty.com/priorities/PSO75BM",
        "summary": "P1",
        "type": "priority_reference"
      },
      "urgency": "high",
      "conference_bridge": {
        "conference_number": "+1 1234123412,,987654321#",
        "conference_url": "https://example.com"
      },
      "resolve_reason": null
    }
  }
}`;

/** The documented incident data under another event type (every incident.* event carries the same `incident` object). */
function incidentEvent(eventType: string, eventId: string, status = 'triggered'): string {
  const body = JSON.parse(PRIORITY_UPDATED) as { event: { id: string; event_type: string; data: Record<string, unknown> } };
  body.event.id = eventId;
  body.event.event_type = eventType;
  body.event.data.status = status;
  return JSON.stringify(body);
}

const PING = '{"event":{"id":"01FKZOXA868SHYEE4DVNWB5P9W","event_type":"pagey.ping","resource_type":"pagey","occurred_at":"2025-04-07T03:00:55.532Z","agent":{"id":"PVE0ZR9","type":"user_reference"},"client":null,"data":{"message":"Hello from your friend Pagey!","type":"ping"}}}';

describe('parsePagerDuty: incidents', () => {
  it('reads incident.triggered as firing, with the incident as labels and no guessed host', () => {
    const alert = alertOf(parsePagerDuty(request(incidentEvent('incident.triggered', '01DEN0J3HQ6SP1R8ZAVOFHRYTD'))));
    expect(alert).toMatchObject({ state: 'firing', alarmName: 'A little bump in the road', severity: 'high', hostName: undefined });
    expect(alert.labels).toEqual({
      event_type: 'incident.triggered',
      incident_id: 'PGR0VU2',
      incident_number: '2',
      incident_key: 'd3640fbd41094207a1c11e58e46b1662',
      status: 'triggered',
      urgency: 'high',
      priority: 'P1',
      service: 'API Service',
      service_id: 'PF9KMXH',
      escalation_policy: 'Default',
      teams: 'Engineering',
      assignees: 'User 123',
      agent: 'Tenex Engineer',
    });
    expect(alert.annotations).toMatchObject({ title: 'A little bump in the road', html_url: 'https://acme.pagerduty.com/incidents/PGR0VU2' });
    expect((alert.raw as { event_type: string }).event_type).toBe('incident.triggered');
  });

  it('reads incident.resolved as resolved, and incident.reopened as a new firing', () => {
    const triggered = alertOf(parsePagerDuty(request(incidentEvent('incident.triggered', 'E1'))));
    const redelivered = alertOf(parsePagerDuty(request(incidentEvent('incident.triggered', 'E1'))));
    const resolved = alertOf(parsePagerDuty(request(incidentEvent('incident.resolved', 'E2', 'resolved'))));
    const reopened = alertOf(parsePagerDuty(request(incidentEvent('incident.reopened', 'E3'))));
    expect(redelivered.fingerprint).toBe(triggered.fingerprint);
    expect(resolved.state).toBe('resolved');
    expect(reopened.state).toBe('firing');
    expect(new Set([triggered.fingerprint, resolved.fingerprint, reopened.fingerprint]).size).toBe(3);
  });

  // Issue 38: the PagerDuty incident is pitcrew's incident (its id, as GET /incidents and its log
  // entries name it), at each event's occurred_at ("V3 Webhooks overview": the time the event happened).
  it('gives the incident: the incident id for key, the event\'s occurred_at for its time', () => {
    const triggered = alertOf(parsePagerDuty(request(incidentEvent('incident.triggered', 'E1'))));
    const resolved = JSON.parse(incidentEvent('incident.resolved', 'E2', 'resolved')) as { event: Record<string, unknown> };
    resolved.event.occurred_at = '2020-10-02T19:05:00.000Z';
    const done = alertOf(parsePagerDuty(request(JSON.stringify(resolved))));
    expect([triggered.incidentKey, triggered.at]).toEqual(['PGR0VU2', Date.parse('2020-10-02T18:45:22.169Z')]);
    expect([done.incidentKey, done.at]).toEqual(['PGR0VU2', Date.parse('2020-10-02T19:05:00.000Z')]);
  });

  it('takes the host from config.hostField when set, and leaves it undefined when the path is empty', () => {
    const raw = incidentEvent('incident.triggered', 'E1');
    expect(alertOf(parsePagerDuty(request(raw, { config: { hostField: 'service.summary' } }))).hostName).toBe('API Service');
    expect(alertOf(parsePagerDuty(request(raw, { config: { hostField: 'service.nothing' } }))).hostName).toBeUndefined();
  });

  it('records other events as control, never acted on: the documented priority_updated, acknowledged, service.updated', () => {
    expect(parsePagerDuty(request(PRIORITY_UPDATED))).toEqual({ kind: 'control', description: expect.stringContaining('incident.priority_updated for incident PGR0VU2: recorded, not acted on') });
    expect(parsePagerDuty(request(incidentEvent('incident.acknowledged', 'E4', 'acknowledged')))).toMatchObject({ kind: 'control' });
    const serviceUpdated = '{"event":{"id":"01BRB6ZP4M6T8ZG4X6BP63ZB9O","event_type":"service.updated","resource_type":"service","occurred_at":"2021-03-02T13:35:11.682Z","agent":null,"client":null,"data":{"id":"PF9KMXH","summary":"testing service updates","type":"service"}}}';
    expect(parsePagerDuty(request(serviceUpdated))).toEqual({ kind: 'control', description: expect.stringContaining('service.updated for service PF9KMXH') });
  });

  it('answers the ping as control', () => {
    expect(parsePagerDuty(request(PING))).toEqual({ kind: 'control', description: expect.stringContaining('PagerDuty ping') });
  });
});

describe('parsePagerDuty: X-PagerDuty-Signature', () => {
  const raw = incidentEvent('incident.triggered', 'E1');

  it('accepts a valid signature, also among several (a secret rotation)', () => {
    expect(parsePagerDuty(request(raw)).kind).toBe('alerts');
    const rotated = `${sign(raw, 'the-old-secret')},${sign(raw)}`;
    expect(parsePagerDuty(request(raw, { headers: { 'x-pagerduty-signature': rotated } })).kind).toBe('alerts');
  });

  it('rejects a wrong signature, a signature of another body and a malformed one', () => {
    const wrongSecret = parsePagerDuty(request(raw, { headers: { 'x-pagerduty-signature': sign(raw, 'another') } }));
    expect(wrongSecret).toEqual({ kind: 'invalid', errors: [{ path: '/headers/x-pagerduty-signature', message: expect.stringContaining('No X-PagerDuty-Signature signature matches') }] });
    expect(JSON.stringify(wrongSecret)).not.toContain(SECRET);
    const otherBody = parsePagerDuty(request(raw, { headers: { 'x-pagerduty-signature': sign(PING) } }));
    expect(otherBody.kind).toBe('invalid');
    expect(parsePagerDuty(request(raw, { headers: { 'x-pagerduty-signature': 'v1=zz' } })).kind).toBe('invalid');
    expect(parsePagerDuty(request(raw, { headers: { 'x-pagerduty-signature': 'v0=abc' } }))).toEqual({ kind: 'invalid', errors: [{ path: '/headers/x-pagerduty-signature', message: 'X-PagerDuty-Signature holds no v1= signature' }] });
  });

  it('rejects a missing signature when the integration has the secret', () => {
    expect(parsePagerDuty(request(raw, { headers: {} }))).toEqual({ kind: 'invalid', errors: [{ path: '/headers/x-pagerduty-signature', message: expect.stringContaining('no X-PagerDuty-Signature header') }] });
  });

  it('checks the signature before answering a ping', () => {
    expect(parsePagerDuty(request(PING, { headers: { 'x-pagerduty-signature': sign(PING, 'another') } })).kind).toBe('invalid');
  });

  it('verifies nothing when the integration has no secret (the API key in the URL is then the only check)', () => {
    expect(parsePagerDuty(request(raw, { headers: {}, secret: undefined })).kind).toBe('alerts');
  });

  it('a replayed delivery is the same event: same fingerprint, a duplicate for the ingest path', () => {
    const first = alertOf(parsePagerDuty(request(raw, { now: Date.parse('2020-10-02T18:45:23Z') })));
    const replay = alertOf(parsePagerDuty(request(raw, { now: Date.parse('2024-01-01T00:00:00Z') })));
    expect(replay.fingerprint).toBe(first.fingerprint);
  });
});

describe('parsePagerDuty: what is not a v3 webhook', () => {
  it('rejects a v2 webhook body and bodies without the event fields', () => {
    const v2 = JSON.stringify({ messages: [{ event: 'incident.trigger', incident: { id: 'P1' } }] });
    expect(parsePagerDuty(request(v2))).toEqual({ kind: 'invalid', errors: [{ path: '/body/event', message: expect.stringContaining('v3 webhook subscription') }] });
    expect(parsePagerDuty(request(JSON.stringify({ event: { id: 'E1' } })))).toEqual({ kind: 'invalid', errors: [{ path: '/body/event/event_type', message: expect.any(String) }] });
    expect(parsePagerDuty(request(JSON.stringify({ event: { event_type: 'incident.triggered' } })))).toMatchObject({ kind: 'invalid', errors: [{ path: '/body/event/id' }] });
    expect(parsePagerDuty(request(JSON.stringify({ event: { id: 'E1', event_type: 'incident.triggered', data: { type: 'incident_note' } } })))).toMatchObject({ kind: 'invalid', errors: [{ path: '/body/event/data' }] });
    expect(parsePagerDuty(request('not json')).kind).toBe('invalid');
  });
});
