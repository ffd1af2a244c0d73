/**
 * Sources: Identity API v2.0 "Authenticate" (https://docs.openstack.org/api-ref/identity/v2/) and
 * v3 "Password authentication with scoped authorization" (https://docs.openstack.org/api-ref/identity/v3/);
 * the Monasca API's "List Alarm Definitions" and "List Notification Methods"
 * (openstack/monasca-api docs/monasca-api-spec.md), whose example definition (CPU percent greater
 * than 10, actions c60ec47e-...) and Webhook method are used below. The emulator that answers as
 * they describe is test/support/keystone-monasca.ts.
 */
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { startKeystoneMonasca, type KeystoneMonasca } from '../../../test/support/keystone-monasca.js';
import { MonascaApiError, MonascaClient, issueToken, maskedAddress, pitcrewAddress, type FetchLike } from './keystone.js';

const PITCREW_URL = 'https://pitcrew.example/api/v1/trigger/channel/monasca/pk_live_abc/int_1';

let emulator: KeystoneMonasca;

beforeAll(async () => {
  emulator = await startKeystoneMonasca([
    { username: 'mini-mon', password: 'password', projects: ['mini-mon'] },
    { username: 'ops', password: 's3cret!', domain: 'ops-domain', projects: ['ops-project'] },
  ]);
  emulator.projects.get('mini-mon')!.methods.push(
    { id: '35cc6f1c-3a29-49fb-a6fc-d9d97d190508', name: 'Name of notification method', type: 'EMAIL', address: 'john.doe@hp.com', period: 0 },
    { id: 'c60ec47e-5038-4bf1-9f95-4046c6e9a759', name: 'pitcrew', type: 'WEBHOOK', address: PITCREW_URL, period: 0 },
    { id: 'd0000000-0000-4000-8000-000000000003', name: 'other hook', type: 'WEBHOOK', address: 'http://localhost:3333', period: 60 },
  );
  emulator.projects.get('mini-mon')!.definitions.push(
    {
      id: 'f9935bcc-9641-4cbf-8224-0993a947ea83',
      name: 'CPU percent greater than 10',
      description: 'Release the hounds',
      expression: '(avg(cpu.user_perc{hostname=devstack}) > 10)',
      severity: 'CRITICAL',
      actions_enabled: true,
      alarm_actions: ['c60ec47e-5038-4bf1-9f95-4046c6e9a759'],
      ok_actions: ['c60ec47e-5038-4bf1-9f95-4046c6e9a759'],
      undetermined_actions: [],
    },
    {
      id: 'g9323232-6543-4cbf-1234-0993a947ea83',
      name: 'Log error count exceeds 1000',
      description: 'Release the cats',
      expression: '(count(log.error{hostname=devstack}, deterministic) > 1000)',
      severity: 'CRITICAL',
      actions_enabled: true,
      alarm_actions: [],
      ok_actions: [],
      undetermined_actions: [],
    },
    {
      id: 'a1111111-0000-4000-8000-000000000001',
      name: 'Disk almost full',
      expression: 'max(disk.space_used_perc) > 90',
      severity: 'HIGH',
      alarm_actions: ['35cc6f1c-3a29-49fb-a6fc-d9d97d190508', 'c60ec47e-5038-4bf1-9f95-4046c6e9a759'],
      ok_actions: [],
      undetermined_actions: [],
    },
  );
});

afterAll(async () => {
  await emulator.close();
});

describe('Keystone tokens', () => {
  it('issues a v2.0 token with tenantName and passwordCredentials', async () => {
    const token = await issueToken({ version: 'v2.0', identityUrl: emulator.url, tenantName: 'mini-mon', username: 'mini-mon', password: 'password' });
    expect(token.id).toMatch(/^[0-9a-f]{32}$/);
    expect(Date.parse(token.expiresAt!)).toBeGreaterThan(Date.now());
  });

  it('issues a v3 token from the X-Subject-Token header, scoped to the project in the user\'s domain', async () => {
    const token = await issueToken({ version: 'v3', identityUrl: `${emulator.url}/v3/`, username: 'ops', password: 's3cret!', userDomainName: 'ops-domain', projectName: 'ops-project', projectDomainName: 'ops-domain' });
    expect(token.id).toMatch(/^[0-9a-f]{32}$/);
    expect(token.expiresAt).toBeTypeOf('string');
  });

  it('says the credentials were refused, without echoing the password', async () => {
    const attempts = [
      issueToken({ version: 'v2.0', identityUrl: emulator.url, tenantName: 'mini-mon', username: 'mini-mon', password: 'wrong-horse' }),
      issueToken({ version: 'v2.0', identityUrl: emulator.url, tenantName: 'ops-project', username: 'mini-mon', password: 'password' }),
      issueToken({ version: 'v3', identityUrl: emulator.url, username: 'ops', password: 's3cret!', projectName: 'ops-project' }), // wrong (default) domain
    ];
    for (const attempt of attempts) {
      const error = await attempt.then(() => undefined, (e: unknown) => e);
      expect(error).toBeInstanceOf(MonascaApiError);
      expect(error).toMatchObject({ kind: 'refused', status: 401, message: expect.stringContaining('Keystone refused the credentials') });
      expect((error as Error).message).not.toMatch(/wrong-horse|s3cret|password"/);
    }
  });

  it('says Keystone is unreachable, and what to check', async () => {
    const closed = await startKeystoneMonasca([]);
    await closed.close();
    const error = await issueToken({ version: 'v2.0', identityUrl: closed.url, tenantName: 't', username: 'u', password: 'p' }).catch((e: unknown) => e);
    expect(error).toMatchObject({ kind: 'unreachable', message: expect.stringMatching(/^Keystone at http:\/\/127\.0\.0\.1:\d+\/v2\.0\/tokens is unreachable \(.*ECONNREFUSED.*\): check identity_url/) });
  });

  it('says which URL is wrong when it is not Keystone', async () => {
    const error = await issueToken({ version: 'v2.0', identityUrl: `${emulator.url}/identity`, tenantName: 't', username: 'u', password: 'p' }).catch((e: unknown) => e);
    expect(error).toMatchObject({ kind: 'not_found', status: 404, message: expect.stringContaining("identity_url should be Keystone's root") });
    await expect(issueToken({ version: 'v3', identityUrl: 'keystone:5000', username: 'u', password: 'p', projectName: 'x' })).rejects.toThrow(/must be an http or https URL|is not a URL/);
  });
});

describe('the Monasca API with a token', () => {
  async function client(): Promise<MonascaClient> {
    const token = await issueToken({ version: 'v2.0', identityUrl: emulator.url, tenantName: 'mini-mon', username: 'mini-mon', password: 'password' });
    return new MonascaClient({ monascaUrl: `${emulator.url}/v2.0`, token: token.id });
  }

  it('lists every notification method and alarm definition across pages, with X-Auth-Token', async () => {
    const monasca = await client();
    emulator.requests.length = 0;
    const methods = await monasca.listNotificationMethods();
    expect(methods.map((m) => m.type)).toEqual(['EMAIL', 'WEBHOOK', 'WEBHOOK']);
    const definitions = await monasca.listAlarmDefinitions();
    expect(definitions.map((d) => d.name).sort()).toEqual(['CPU percent greater than 10', 'Disk almost full', 'Log error count exceeds 1000']);
    expect(definitions.find((d) => d.name === 'CPU percent greater than 10')).toMatchObject({ severity: 'CRITICAL', actionsEnabled: true, alarmActions: ['c60ec47e-5038-4bf1-9f95-4046c6e9a759'] });
    // Two pages each (page size 2), all on the URL we were given, never the API's own internal host.
    expect(emulator.requests.map((r) => r.path)).toEqual(['/v2.0/notification-methods', '/v2.0/notification-methods', '/v2.0/alarm-definitions', '/v2.0/alarm-definitions']);
    expect(emulator.requests.every((r) => typeof r.token === 'string')).toBe(true);
  });

  it('shows which alarm definitions notify pitcrew\'s URL, and on which transitions', async () => {
    const { methods, definitions } = await (await client()).coverage(pitcrewAddress('int_1'));
    expect(methods.map((m) => m.id)).toEqual(['c60ec47e-5038-4bf1-9f95-4046c6e9a759']);
    const byName = Object.fromEntries(definitions.map((d) => [d.definition.name, [d.onAlarm, d.onOk, d.onUndetermined]]));
    expect(byName).toEqual({
      'CPU percent greater than 10': [true, true, false],
      'Disk almost full': [true, false, false],
      'Log error count exceeds 1000': [false, false, false],
    });
  });

  it("tells pitcrew's URL by the integration it names, whatever host and key it carries, and masks the key", () => {
    const ours = pitcrewAddress('int_1');
    expect(ours(PITCREW_URL)).toBe(true);
    expect(ours(`${PITCREW_URL}/`)).toBe(true);
    expect(ours('http://10.0.0.5:8080/api/v1/trigger/channel/monasca/another-key/int_1')).toBe(true);
    expect(ours('https://pitcrew.example/api/v1/trigger/channel/monasca/pk_live_abc/int_2')).toBe(false);
    expect(ours('https://pitcrew.example/api/v1/trigger/channel/webhook/pk_live_abc/int_1')).toBe(false);
    expect(ours('not a url')).toBe(false);
    expect(maskedAddress(PITCREW_URL)).toBe('https://pitcrew.example/api/v1/trigger/channel/monasca/<api_key>/int_1');
  });

  it('sees only the token\'s project', async () => {
    const token = await issueToken({ version: 'v3', identityUrl: emulator.url, username: 'ops', password: 's3cret!', userDomainName: 'ops-domain', projectName: 'ops-project', projectDomainName: 'ops-domain' });
    const monasca = new MonascaClient({ monascaUrl: emulator.url, token: token.id });
    expect(await monasca.listAlarmDefinitions()).toEqual([]);
  });

  it('says "the token was refused: get a new one" on 401, without echoing the token', async () => {
    const monasca = await client();
    emulator.revokeTokens();
    const error = await monasca.listAlarmDefinitions().catch((e: unknown) => e);
    expect(error).toMatchObject({ kind: 'refused', status: 401, message: expect.stringContaining('the token was refused: get a new one') });
    const forged = await new MonascaClient({ monascaUrl: emulator.url, token: 'deadbeef-not-a-token' }).listNotificationMethods().catch((e: unknown) => e);
    expect((forged as Error).message).toContain('the token was refused');
    expect((forged as Error).message).not.toContain('deadbeef');
  });

  it('says Monasca is unreachable, and a non-JSON or unknown answer clearly', async () => {
    const closed = await startKeystoneMonasca([]);
    await closed.close();
    const down = await new MonascaClient({ monascaUrl: closed.url, token: 't' }).listAlarmDefinitions().catch((e: unknown) => e);
    expect(down).toMatchObject({ kind: 'unreachable', message: expect.stringContaining('is unreachable') });
    expect((down as Error).message).toContain('check monasca_url');

    const html: FetchLike = async () => new Response('<html>login</html>', { status: 200, headers: { 'content-type': 'text/html' } });
    await expect(new MonascaClient({ monascaUrl: 'http://monasca.test', token: 't', fetch: html }).listAlarmDefinitions()).rejects.toThrow(/not JSON: check the URL/);
    const broken: FetchLike = async () => new Response('{}', { status: 503 });
    await expect(new MonascaClient({ monascaUrl: 'http://monasca.test', token: 't', fetch: broken }).listAlarmDefinitions()).rejects.toMatchObject({ kind: 'unexpected', status: 503 });
    const notMonasca: FetchLike = async () => Response.json({ hello: 'world' });
    await expect(new MonascaClient({ monascaUrl: 'http://monasca.test', token: 't', fetch: notMonasca }).listAlarmDefinitions()).rejects.toThrow(/without an elements list/);
  });

  it('goes through the fetch it is given (the service\'s, under its egress policy)', async () => {
    const seen: string[] = [];
    const recording: FetchLike = (url, init) => {
      seen.push(`${init.method} ${url}`);
      return fetch(url, init);
    };
    const token = await issueToken({ version: 'v2.0', identityUrl: emulator.url, tenantName: 'mini-mon', username: 'mini-mon', password: 'password' }, { fetch: recording });
    await new MonascaClient({ monascaUrl: emulator.url, token: token.id, fetch: recording }).listNotificationMethods();
    expect(seen).toEqual([
      `POST ${emulator.url}/v2.0/tokens`,
      `GET ${emulator.url}/v2.0/notification-methods`,
      `GET ${emulator.url}/v2.0/notification-methods?offset=c60ec47e-5038-4bf1-9f95-4046c6e9a759`,
    ]);
  });
});
