import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { applyObservations } from '../src/incidents/apply.js';
import type { AlarmObservation } from '../src/integrations/observation.js';
import type { Store } from '../src/store/database.js';
import { newId } from '../src/store/ids.js';
import { createTenant } from '../src/tenants/repository.js';
import { createTestDatabase, testDialects, type TestDatabase } from './support/databases.js';

/*
 * applyObservations: what an import reads from a tool becomes incidents by the rules the ingest
 * follows (src/incidents/book.ts), idempotently, on both databases.
 */

const T0 = Date.UTC(2026, 10, 1, 10, 0, 0);
const MIN = 60_000;

function obs(key: string, state: 'firing' | 'resolved', at: number | null, extra: Partial<AlarmObservation> = {}): AlarmObservation {
  return { incidentKey: key, alarmName: `alarm ${key}`, hostname: 'web-1', severity: 'critical', state, at, ...extra };
}

describe.each(testDialects())('applyObservations on %s', (dialect) => {
  let database: TestDatabase;
  let store: Store;
  let tenantId = '';
  let otherTenantId = '';

  beforeAll(async () => {
    database = await createTestDatabase(dialect);
    store = database.open();
    tenantId = (await createTenant(store.db, 'imports')).id;
    otherTenantId = (await createTenant(store.db, 'other')).id;
  });
  afterAll(async () => {
    await store.close();
    await database.drop();
  });

  const incidents = (integrationId: string) => store.db.selectFrom('incidents').selectAll().where('integration_id', '=', integrationId).orderBy('opened_at').execute();

  it('opens, counts re-firings and resolves at the tool\'s times; the same page again changes nothing', async () => {
    const integration = newId();
    const page = [
      obs('k1', 'firing', T0),
      obs('k1', 'firing', T0 + 5 * MIN),
      obs('k2', 'firing', T0 + MIN, { hostname: 'db-1', severity: 'warning' }),
      obs('k1', 'resolved', T0 + 10 * MIN),
    ];
    const first = await applyObservations(store.db, tenantId, integration, page, T0 + 20 * MIN);
    expect(first).toMatchObject({ opened: 2, resolved: 1, updated: 0 });
    expect(first.incidentIds[0]).toBe(first.incidentIds[1]);
    expect(first.incidentIds[0]).toBe(first.incidentIds[3]);

    const rows = await incidents(integration);
    expect(rows.map((r) => [r.incident_key, r.state, r.opened_at, r.resolved_at, r.occurrences, r.resolved_by, r.hostname, r.severity])).toEqual([
      ['k1', 'resolved', T0, T0 + 10 * MIN, 2, 'tool', 'web-1', 'critical'],
      ['k2', 'open', T0 + MIN, null, 1, null, 'db-1', 'warning'],
    ]);

    const again = await applyObservations(store.db, tenantId, integration, page, T0 + 30 * MIN);
    expect(again).toMatchObject({ opened: 0, resolved: 0, updated: 0, incidentIds: first.incidentIds });
    expect(await incidents(integration)).toEqual(rows);
  });

  it('takes a page in the order of its times, and a page overlapping the one before counts only what is new', async () => {
    const integration = newId();
    // Newest first, as some tools list their history.
    await applyObservations(store.db, tenantId, integration, [obs('k', 'firing', T0 + 2 * MIN), obs('k', 'firing', T0)], T0 + 3 * MIN);
    await applyObservations(store.db, tenantId, integration, [obs('k', 'firing', T0 + 2 * MIN), obs('k', 'firing', T0 + 4 * MIN), obs('k', 'resolved', T0 + 6 * MIN)], T0 + 7 * MIN);
    const [row, ...rest] = await incidents(integration);
    expect(rest).toEqual([]);
    expect(row).toMatchObject({ opened_at: T0, occurrences: 3, last_fired_at: T0 + 4 * MIN, state: 'resolved', resolved_at: T0 + 6 * MIN });
  });

  it('opens a new incident for a firing after the resolution, and keeps a resolution of nothing known out', async () => {
    const integration = newId();
    const stray = await applyObservations(store.db, tenantId, integration, [obs('k', 'resolved', T0)], T0);
    expect(stray).toMatchObject({ opened: 0, resolved: 0, incidentIds: [null] });
    await applyObservations(store.db, tenantId, integration, [obs('k', 'firing', T0 + MIN), obs('k', 'resolved', T0 + 2 * MIN), obs('k', 'firing', T0 + 3 * MIN)], T0 + 4 * MIN);
    expect((await incidents(integration)).map((r) => [r.state, r.opened_at, r.resolved_at])).toEqual([
      ['resolved', T0 + MIN, T0 + 2 * MIN],
      ['open', T0 + 3 * MIN, null],
    ]);
  });

  it('brings the history before an incident it already knows of, each firing with its resolution', async () => {
    const integration = newId();
    // Known first (by webhook, say): the alarm firing since T0 + 60 min.
    await applyObservations(store.db, tenantId, integration, [obs('k', 'firing', T0 + 60 * MIN)], T0 + 61 * MIN);
    // Then its history: two earlier incidents, one with a re-firing; and the current firing again.
    const history = [
      obs('k', 'firing', T0), obs('k', 'resolved', T0 + 10 * MIN),
      obs('k', 'firing', T0 + 20 * MIN), obs('k', 'firing', T0 + 25 * MIN), obs('k', 'resolved', T0 + 30 * MIN),
      obs('k', 'firing', T0 + 60 * MIN),
    ];
    await applyObservations(store.db, tenantId, integration, history, T0 + 62 * MIN);
    const expected = [
      ['resolved', T0, T0 + 10 * MIN, 1],
      ['resolved', T0 + 20 * MIN, T0 + 30 * MIN, 2],
      ['open', T0 + 60 * MIN, null, 1],
    ];
    expect((await incidents(integration)).map((r) => [r.state, r.opened_at, r.resolved_at, r.occurrences])).toEqual(expected);
    await applyObservations(store.db, tenantId, integration, history, T0 + 63 * MIN);
    expect((await incidents(integration)).map((r) => [r.state, r.opened_at, r.resolved_at, r.occurrences])).toEqual(expected);
  });

  it('openKeys: resolves the integration\'s open incidents the tool no longer lists, only those, only its own', async () => {
    const integration = newId();
    const otherIntegration = newId();
    await applyObservations(store.db, tenantId, integration, [obs('a', 'firing', T0), obs('b', 'firing', T0)], T0 + MIN);
    await applyObservations(store.db, tenantId, otherIntegration, [obs('b', 'firing', T0)], T0 + MIN);
    await applyObservations(store.db, otherTenantId, integration, [obs('b', 'firing', T0)], T0 + MIN);
    const applied = await applyObservations(store.db, tenantId, integration, [obs('a', 'firing', T0)], T0 + 9 * MIN, { openKeys: ['a'] });
    expect(applied).toMatchObject({ opened: 0, resolved: 1 });
    expect((await incidents(integration)).filter((r) => r.tenant_id === tenantId).map((r) => [r.incident_key, r.state, r.resolved_at, r.resolved_by])).toEqual([
      ['a', 'open', null, null],
      ['b', 'resolved', T0 + 9 * MIN, 'tool'],
    ]);
    expect((await incidents(otherIntegration)).map((r) => r.state)).toEqual(['open']);
    expect((await incidents(integration)).filter((r) => r.tenant_id === otherTenantId).map((r) => r.state)).toEqual(['open']);
  });

  it('runs inside the importer\'s transaction, and rolls back with it', async () => {
    const integration = newId();
    await expect(store.db.transaction().execute(async (tx) => {
      await applyObservations(tx, tenantId, integration, [obs('k', 'firing', T0)], T0);
      expect(await tx.selectFrom('incidents').select('id').where('integration_id', '=', integration).execute()).toHaveLength(1);
      throw new Error('the cursor could not be stored');
    })).rejects.toThrow('the cursor could not be stored');
    expect(await incidents(integration)).toEqual([]);
  });

  it('the database holds at most one open incident per alarm', async () => {
    const integration = newId();
    await applyObservations(store.db, tenantId, integration, [obs('k', 'firing', T0)], T0);
    const [row] = await incidents(integration);
    await expect(store.db.insertInto('incidents').values({ ...row!, id: newId() }).execute()).rejects.toThrow(/unique/i);
    // A resolved one beside it is fine, and so is the same key open in another tenant.
    await store.db.insertInto('incidents').values({ ...row!, id: newId(), state: 'resolved', resolved_at: T0 }).execute();
    await store.db.insertInto('incidents').values({ ...row!, id: newId(), tenant_id: otherTenantId }).execute();
    // Webhook incidents (no integration) are held to one open per key as well.
    const webhook = { ...row!, integration_id: null, incident_key: `webhook-${integration}` };
    await store.db.insertInto('incidents').values({ ...webhook, id: newId() }).execute();
    await expect(store.db.insertInto('incidents').values({ ...webhook, id: newId() }).execute()).rejects.toThrow(/unique/i);
  });
});
