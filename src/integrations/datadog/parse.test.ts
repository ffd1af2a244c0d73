/*
 * Sources of the bodies below:
 * - The default payload and the variables: https://docs.datadoghq.com/integrations/webhooks/
 *   ("Usage": the default JSON holds body $EVENT_MSG, last_updated $LAST_UPDATED, event_type
 *   $EVENT_TYPE, title $EVENT_TITLE, date $DATE, org {id $ORG_ID, name $ORG_NAME}, id $ID;
 *   "Variables": $ALERT_TRANSITION is Recovered, Triggered/Re-Triggered, No Data/Re-No Data,
 *   Warn/Re-Warn, Null or Renotify; $ALERT_CYCLE_KEY links events from trigger to recovery).
 * - The default payload with common additions as ServiceNow documents it ("Sample payload from
 *   Datadog", servicenow.com docs): alert_id, alert_transition, alert_status, host_name, tags, alert_scope...
 * - Two bodies Datadog sent, recorded verbatim in a comment of CodeNow/fluffy index.js (custom keys
 *   event_id and event_tags, titles "[Triggered on {host:i-3b93aafb}] ...").
 */
import { describe, expect, it } from 'vitest';
import { alertOf } from '../../../test/support/tool-notifications.js';
import type { ToolRequest } from '../notification.js';
import { groupOf, parseDatadog } from './parse.js';

function request(body: unknown, extra: Partial<ToolRequest> = {}): ToolRequest {
  return { rawBody: JSON.stringify(body), body, headers: { 'content-type': 'application/json' }, config: {}, secret: undefined, now: Date.now(), ...extra };
}

/** The default payload as Datadog renders it for a metric monitor grouped by host. */
function defaultPayload(transition: 'Triggered' | 'Recovered' | 'Warn', id = '5764589284732918234'): Record<string, unknown> {
  return {
    body: `%%%\n**system.load.1** over **host:web-1** was **> 4.0** on average during the **last 5m**.\n%%%`,
    last_updated: '1718000000000',
    event_type: 'query_alert_monitor',
    title: `[${transition} on {host:web-1}] Load is high`,
    date: '1718000000000',
    org: { id: '123456', name: 'Acme' },
    id,
  };
}

/** ServiceNow's documented payload: the default plus the alert variables. */
function withAdditions(transition: string, cycleKey = '7165411293721411234'): Record<string, unknown> {
  return {
    ...defaultPayload('Triggered'),
    title: `[${transition} on {host:db-2,device:/dev/sda1}] Disk almost full`,
    alert_id: '98765',
    alert_metric: 'system.disk.in_use',
    alert_priority: 'P2',
    alert_transition: transition,
    alert_status: 'system.disk.in_use over host:db-2,device:/dev/sda1 was > 0.9 on average during the last 5m.',
    alert_title: 'Disk almost full',
    alert_type: transition === 'Recovered' ? 'success' : 'error',
    alert_cycle_key: cycleKey,
    host_name: 'db-2',
    priority: 'normal',
    tags: 'device:/dev/sda1,env:prod,host:db-2,role:database,monitor',
    alert_scope: 'device:/dev/sda1,host:db-2',
  };
}

describe('parseDatadog: the default payload', () => {
  it('reads the state from the title, the host from its scope, the monitor name without the prefix', () => {
    const alert = alertOf(parseDatadog(request(defaultPayload('Triggered'))));
    expect(alert.state).toBe('firing');
    expect(alert.severity).toBe('alert');
    expect(alert.hostName).toBe('web-1');
    expect(alert.alarmName).toBe('Load is high');
    expect(alert.labels).toMatchObject({ event_type: 'query_alert_monitor', org_id: '123456', org_name: 'Acme', id: '5764589284732918234' });
    expect(alert.annotations.title).toBe('[Triggered on {host:web-1}] Load is high');
    expect(alert.annotations.body).toContain('system.load.1');
    expect(alert.raw).toEqual(defaultPayload('Triggered'));
  });

  it('fingerprints by the event: a retry of the same event is a duplicate, the recovery is another', () => {
    const first = alertOf(parseDatadog(request(defaultPayload('Triggered'))));
    const retry = alertOf(parseDatadog(request(defaultPayload('Triggered'))));
    const recovery = alertOf(parseDatadog(request(defaultPayload('Recovered', '5764589284732999999'))));
    expect(retry.fingerprint).toBe(first.fingerprint);
    expect(recovery.state).toBe('resolved');
    expect(recovery.fingerprint).not.toBe(first.fingerprint);
  });

  it('reads a Warn title as firing with severity warn, and a priority prefix', () => {
    const alert = alertOf(parseDatadog(request({ ...defaultPayload('Warn'), title: '[P1] [Warn on {host:web-1}] Load is high' })));
    expect(alert.state).toBe('firing');
    expect(alert.severity).toBe('warn');
    expect(alert.alarmName).toBe('Load is high');
  });

  it('asks for $ALERT_TRANSITION when the title does not tell the state', () => {
    const result = parseDatadog(request({ ...defaultPayload('Triggered'), title: 'Deploy finished' }));
    expect(result).toEqual({ kind: 'invalid', errors: [{ path: '/body/title', message: expect.stringContaining('"alert_transition": "$ALERT_TRANSITION"') }] });
  });
});

describe('parseDatadog: payloads with the alert variables', () => {
  it('takes the state from alert_transition and the host from host_name', () => {
    const alert = alertOf(parseDatadog(request(withAdditions('Triggered'))));
    expect(alert).toMatchObject({ state: 'firing', severity: 'alert', hostName: 'db-2', alarmName: 'Disk almost full' });
    expect(alert.labels).toMatchObject({ device: '/dev/sda1', env: 'prod', role: 'database', monitor: '', alert_id: '98765', alert_priority: 'P2', alert_transition: 'Triggered' });
    expect(alert.annotations.alert_status).toContain('was > 0.9');
  });

  it('fingerprints by cycle: Re-Triggered repeats the firing, Warn then Triggered is a new one, recovery differs', () => {
    const triggered = alertOf(parseDatadog(request(withAdditions('Triggered'))));
    const retriggered = alertOf(parseDatadog(request({ ...withAdditions('Re-Triggered'), id: '1' })));
    const warn = alertOf(parseDatadog(request(withAdditions('Warn'))));
    const recovered = alertOf(parseDatadog(request(withAdditions('Recovered'))));
    const nextCycle = alertOf(parseDatadog(request(withAdditions('Triggered', '7165411293721499999'))));
    expect(retriggered.fingerprint).toBe(triggered.fingerprint);
    expect(warn.fingerprint).not.toBe(triggered.fingerprint);
    expect(recovered.state).toBe('resolved');
    expect(new Set([triggered.fingerprint, warn.fingerprint, recovered.fingerprint, nextCycle.fingerprint]).size).toBe(4);
  });

  // Issue 38: the incident is the monitor's group (integrations/observation.ts: `<monitor id>:<group>`,
  // the group as the monitor API's state.groups names it: tags joined by ','), from $DATE of the trigger to $DATE of the recovery.
  it('gives the incident: $ALERT_ID with the group of $ALERT_SCOPE for key, $DATE for its time', () => {
    const triggered = alertOf(parseDatadog(request(withAdditions('Triggered'))));
    const recovered = alertOf(parseDatadog(request({ ...withAdditions('Recovered'), date: '1718000300000', alert_scope: 'host:db-2, device:/dev/sda1' })));
    expect([triggered.incidentKey, triggered.at]).toEqual(['98765:device:/dev/sda1,host:db-2', 1718000000000]);
    expect([recovered.incidentKey, recovered.at]).toEqual(['98765:device:/dev/sda1,host:db-2', 1718000300000]);
    // A monitor without groups: its one group is '*'.
    expect(alertOf(parseDatadog(request({ ...withAdditions('Triggered'), alert_scope: '' }))).incidentKey).toBe('98765:*');
    expect(groupOf('role:db,host:a')).toBe(groupOf(' host:a , role:db'));
  });

  it('treats No Data as firing with its own severity', () => {
    const alert = alertOf(parseDatadog(request(withAdditions('No Data'))));
    expect(alert).toMatchObject({ state: 'firing', severity: 'no data' });
  });

  it('answers Renotify and Null as control, never acted on', () => {
    expect(parseDatadog(request(withAdditions('Renotify')))).toMatchObject({ kind: 'control', description: expect.stringContaining('not acted on') });
    expect(parseDatadog(request(withAdditions('Null')))).toMatchObject({ kind: 'control' });
  });

  it('rejects an unknown transition, naming the accepted ones', () => {
    expect(parseDatadog(request(withAdditions('Exploded')))).toEqual({ kind: 'invalid', errors: [{ path: '/body/alert_transition', message: expect.stringContaining('Recovered, Triggered') }] });
  });

  it('finds the host in the scope, then in a single host: tag; never guesses between several', () => {
    const scoped = { ...withAdditions('Triggered'), host_name: '', title: 'Disk almost full' };
    expect(alertOf(parseDatadog(request(scoped))).hostName).toBe('db-2');
    const tagged = { ...scoped, alert_scope: '' };
    expect(alertOf(parseDatadog(request(tagged))).hostName).toBe('db-2');
    const several = { ...tagged, tags: 'host:db-2,host:db-3,env:prod' };
    const alert = alertOf(parseDatadog(request(several)));
    expect(alert.hostName).toBeUndefined();
    expect(alert.labels.host).toBe('db-2,db-3');
  });
});

describe('parseDatadog: bodies Datadog sent (CodeNow/fluffy)', () => {
  const recovered = {
    alert_transition: 'Recovered',
    body: '%%%\nrestart docker\n\n  **Dock is almost out of memory...** was marked as **recovered** on **host:i-3b93aafb,region:us-west-1,role:dock** by Anand Patel.\n%%%',
    date: '1448435477000',
    event_id: '3089903685627551077',
    event_tags: 'availability-zone:us-west-1a,host:i-3b93aafb,image:ami-9f305fff,instance-type:c3.large,kernel:none,monitor,org:6585,region:us-west-1,role:dock,security-group:sg-59a3503c,security-group:sg-cb8e7dae',
    event_type: 'metric_alert_monitor',
    link: 'https://app.datadoghq.com/event/event?id=3089903685627551077',
    secret: 'I_solemnly_swear_that_I_am_up_to_no_good',
    title: '[Recovered on {host:i-3b93aafb}] Dock is almost out of memory...',
  };
  const triggered = {
    ...recovered,
    alert_transition: 'Triggered',
    date: '1448435530000',
    event_id: '3089904566766935419',
    link: 'https://app.datadoghq.com/event/event?id=3089904566766935419',
    title: '[Triggered on {host:i-3b93aafb}] Dock is almost out of memory...',
  };

  it('reads both, with event_id and event_tags in place of id and tags', () => {
    const fired = alertOf(parseDatadog(request(triggered)));
    const resolved = alertOf(parseDatadog(request(recovered)));
    expect(fired).toMatchObject({ state: 'firing', hostName: 'i-3b93aafb', alarmName: 'Dock is almost out of memory...' });
    expect(fired.labels).toMatchObject({ region: 'us-west-1', role: 'dock', 'security-group': 'sg-59a3503c,sg-cb8e7dae' });
    expect(JSON.stringify([fired.labels, fired.annotations])).not.toContain('I_solemnly_swear');
    expect(fired.annotations.link).toBe('https://app.datadoghq.com/event/event?id=3089904566766935419');
    expect(resolved.state).toBe('resolved');
    expect(resolved.fingerprint).not.toBe(fired.fingerprint);
    // Without $ALERT_ID the monitor is not named: the alarm's name and host stand for it, the same in both.
    expect(resolved.incidentKey).toBe(fired.incidentKey);
    expect(fired.at).toBe(1448435530000);
  });
});

describe('parseDatadog: what is not a Datadog body', () => {
  it('rejects a form-encoded or non-object body', () => {
    expect(parseDatadog(request(undefined, { rawBody: 'title=x' }))).toEqual({ kind: 'invalid', errors: [{ path: '/body', message: expect.stringContaining('Encode as form') }] });
    expect(parseDatadog(request([defaultPayload('Triggered')]))).toMatchObject({ kind: 'invalid' });
  });

  it('asks for $ID when nothing identifies the notification', () => {
    const { id: _id, ...withoutId } = defaultPayload('Triggered');
    expect(parseDatadog(request(withoutId))).toEqual({ kind: 'invalid', errors: [{ path: '/body/id', message: expect.stringContaining('"id": "$ID"') }] });
  });
});

describe('parseDatadog: the shared secret header', () => {
  const secret = 's3cret-value';

  it('accepts the secret in X-Pitcrew-Secret or the configured header', () => {
    expect(parseDatadog(request(defaultPayload('Triggered'), { secret, headers: { 'x-pitcrew-secret': secret } })).kind).toBe('alerts');
    const configured = request(defaultPayload('Triggered'), { secret, config: { secretHeader: 'X-Alert-Token' }, headers: { 'x-alert-token': secret } });
    expect(parseDatadog(configured).kind).toBe('alerts');
  });

  it('rejects a wrong secret without echoing either value', () => {
    const result = parseDatadog(request(defaultPayload('Triggered'), { secret, headers: { 'x-pitcrew-secret': 'guess' } }));
    expect(result).toEqual({ kind: 'invalid', errors: [{ path: '/headers/x-pitcrew-secret', message: expect.stringContaining('does not match') }] });
    expect(JSON.stringify(result)).not.toContain(secret);
    expect(JSON.stringify(result)).not.toContain('guess');
  });

  it('rejects a missing header when the integration has a secret, and needs none when it has not', () => {
    expect(parseDatadog(request(defaultPayload('Triggered'), { secret }))).toEqual({ kind: 'invalid', errors: [{ path: '/headers/x-pitcrew-secret', message: expect.stringContaining('no x-pitcrew-secret header') }] });
    expect(parseDatadog(request(defaultPayload('Triggered'))).kind).toBe('alerts');
  });
});
