import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { IncidentBook, type Sighting } from '../src/incidents/book.js';
import { incidentWrites } from '../src/incidents/writes.js';
import type { Store } from '../src/store/database.js';
import { newId } from '../src/store/ids.js';
import type { IncidentRow } from '../src/store/schema.js';
import { Statements } from '../src/store/statements.js';
import { createTenant } from '../src/tenants/repository.js';
import { createTestDatabase, testDialects, type TestDatabase } from './support/databases.js';

/*
 * incidentWrites (src/incidents/writes.ts) leaves out of an insert the columns no new incident of
 * the batch sets, and writes an incident's rule and execution lists only when they changed: what
 * is stored afterwards is the book's rows all the same, on both databases.
 */

const T0 = Date.UTC(2026, 10, 1, 10, 0, 0);
const MIN = 60_000;
const DEFAULTS = () => ({ automationMs: 3_600_000, quietMs: 1_800_000 });

describe.each(testDialects())('incidentWrites on %s', (dialect) => {
  let database: TestDatabase;
  let store: Store;
  let tenantId = '';
  const integrationId = newId();

  beforeAll(async () => {
    database = await createTestDatabase(dialect);
    store = database.open();
    tenantId = (await createTenant(store.db, 'writes')).id;
  });
  afterAll(async () => {
    await store.close();
    await database.drop();
  });

  const sighting = (key: string, state: 'firing' | 'resolved', at: number, fingerprint: string): Sighting => ({
    tenantId, integrationId, receivedAt: at, repeat: { by: 'notification', fingerprint },
    observation: { incidentKey: key, alarmName: 'NodeDiskFull', hostname: `host-${key}`, severity: 'critical', state, at },
  });
  const stored = (keys: string[]) => store.db.selectFrom('incidents').selectAll().where('incident_key', 'in', keys).orderBy('incident_key').execute();
  const write = async (book: IncidentBook) => {
    await store.db.transaction().execute(async (tx) => {
      for (const query of incidentWrites(new Statements(dialect), dialect, book)) await tx.executeQuery(query);
    });
  };
  const rowsOf = (book: IncidentBook): IncidentRow[] => {
    const { inserts, touched, resolving } = book.changes();
    return [...inserts, ...touched, ...resolving].sort((a, b) => a.incident_key.localeCompare(b.incident_key));
  };

  it('new incidents, some chained and some resolved in the batch, are stored as the book has them', async () => {
    const book = new IncidentBook([], DEFAULTS);
    const chained = book.sight(sighting('a1', 'firing', T0, 'f1'))!;
    book.chain(chained, 'alert', newId());
    book.sight(sighting('a2', 'firing', T0, 'f2'));
    await write(book);
    expect(await stored(['a1', 'a2'])).toEqual(rowsOf(book));

    const mixed = new IncidentBook([], DEFAULTS);
    mixed.sight(sighting('a3', 'firing', T0, 'f3'));
    mixed.sight(sighting('a4', 'firing', T0, 'f4'));
    mixed.sight(sighting('a4', 'resolved', T0 + 5 * MIN, 'f5'));
    await write(mixed);
    const rows = await stored(['a3', 'a4']);
    expect(rows).toEqual(rowsOf(mixed));
    expect(rows.map((r) => [r.state, r.resolved_at, r.resolved_by])).toEqual([['open', null, null], ['resolved', T0 + 5 * MIN, 'tool']]);
  });

  it('a re-firing keeps the lists as stored unless it links a new rule or execution; either way the occurrence is counted', async () => {
    const opening = new IncidentBook([], DEFAULTS);
    const quiet = opening.sight(sighting('b1', 'firing', T0, 'f1'))!;
    const linked = opening.sight(sighting('b2', 'firing', T0, 'f1'))!;
    opening.link(quiet, ['rule-1'], ['execution-1']);
    opening.link(linked, ['rule-1'], []);
    await write(opening);

    const refiring = new IncidentBook(await stored(['b1', 'b2']), DEFAULTS);
    for (const key of ['b1', 'b2']) refiring.sight(sighting(key, 'firing', T0 + MIN, 'f2'));
    refiring.link(quiet, ['rule-1'], []);
    refiring.link(linked, ['rule-2'], ['execution-2']);
    refiring.chain(quiet, 'event', 'event-2');
    expect([...refiring.changes().linked]).toEqual([linked]);
    await write(refiring);

    const rows = await stored(['b1', 'b2']);
    expect(rows).toEqual(rowsOf(refiring));
    expect(rows.map((r) => [r.occurrences, JSON.parse(r.rule_ids), JSON.parse(r.execution_ids), r.execution_count, r.last_event_id])).toEqual([
      [2, ['rule-1'], ['execution-1'], 1, 'event-2'],
      [2, ['rule-1', 'rule-2'], ['execution-2'], 1, null],
    ]);
  });
});
