import SqliteDatabase from 'better-sqlite3';
import { Kysely, SqliteDialect } from 'kysely';
import { afterAll, describe, expect, it } from 'vitest';
import type { Database } from '../store/schema.js';
import { approvalStandings, outcomesOf, standingOf, type ApprovalStanding } from './approval-outcomes.js';

const APPROVED = 'approved by ana@example.com (slack): go';
const REJECTED = 'rejected by bo@example.com (api): not now';
const UNDECIDED = "nobody approved or rejected it within 5 min (the rule's approval.timeoutSeconds); it never ran";

// Every state a request's message or card shows: the wait, each way out of it, and where an approved run went after.
const CASES: Array<[string, { state: string; reason: string | null; left_to: string | null; left_because: string | null }, ApprovalStanding]> = [
  ['waiting', { state: 'awaiting_approval', reason: 'waits for approval', left_to: null, left_because: null }, { state: 'awaiting_approval', reason: 'waits for approval', outcome: null }],
  ['approved, queued', { state: 'queued', reason: null, left_to: 'queued', left_because: APPROVED }, { state: 'queued', reason: null, outcome: { decision: 'approved', words: APPROVED } }],
  ['approved, running', { state: 'running', reason: null, left_to: 'queued', left_because: APPROVED }, { state: 'running', reason: null, outcome: { decision: 'approved', words: APPROVED } }],
  ['approved, succeeded', { state: 'succeeded', reason: null, left_to: 'queued', left_because: APPROVED }, { state: 'succeeded', reason: null, outcome: { decision: 'approved', words: APPROVED } }],
  ['approved, failed', { state: 'failed', reason: 'exit 1', left_to: 'queued', left_because: APPROVED }, { state: 'failed', reason: 'exit 1', outcome: { decision: 'approved', words: APPROVED } }],
  ['approved, then expired', { state: 'expired', reason: 'no agent took it', left_to: 'queued', left_because: APPROVED }, { state: 'expired', reason: 'no agent took it', outcome: { decision: 'approved', words: APPROVED } }],
  ['approved, then cancelled', { state: 'cancelled', reason: 'cancelled by ana', left_to: 'queued', left_because: APPROVED }, { state: 'cancelled', reason: 'cancelled by ana', outcome: { decision: 'approved', words: APPROVED } }],
  ['rejected', { state: 'rejected', reason: REJECTED, left_to: 'rejected', left_because: REJECTED }, { state: 'rejected', reason: REJECTED, outcome: { decision: 'rejected', words: REJECTED } }],
  ['expired undecided', { state: 'expired', reason: UNDECIDED, left_to: 'expired', left_because: UNDECIDED }, { state: 'expired', reason: UNDECIDED, outcome: { decision: 'expired', words: UNDECIDED } }],
  ['cancelled undecided', { state: 'cancelled', reason: null, left_to: 'cancelled', left_because: null }, { state: 'cancelled', reason: null, outcome: { decision: 'cancelled', words: 'cancelled' } }],
];

describe('standingOf', () => {
  it.each(CASES)('%s', (_, row, standing) => {
    expect(standingOf({ id: 'e1', ...row })).toEqual(standing);
  });
});

describe('outcomesOf', () => {
  it('keeps those that left their wait, by id, and leaves out those that still wait', () => {
    const standings = new Map(CASES.map(([name, , standing]) => [name, standing]));
    expect(outcomesOf(standings)).toEqual(Object.fromEntries(CASES.filter(([, , s]) => s.outcome).map(([name, , s]) => [name, s.outcome])));
    expect(outcomesOf(standings)).not.toHaveProperty('waiting');
  });
});

describe('approvalStandings', () => {
  const sqlite = new SqliteDatabase(':memory:');
  sqlite.exec(`
    create table executions (id text primary key, state text not null, reason text);
    create table execution_transitions (id text primary key, execution_id text not null references executions(id), from_state text, to_state text not null, reason text, at bigint not null);
  `);
  const queries: string[] = [];
  const db = new Kysely<Database>({ dialect: new SqliteDialect({ database: sqlite }), log: (event) => { queries.push(event.query.sql); } });
  afterAll(() => db.destroy());

  it('reads every state in one query: the execution, and its move out of the wait among its other moves', async () => {
    const insertExecution = sqlite.prepare('insert into executions (id, state, reason) values (?, ?, ?)');
    const insertMove = sqlite.prepare('insert into execution_transitions (id, execution_id, from_state, to_state, reason, at) values (?, ?, ?, ?, ?, 1)');
    CASES.forEach(([name, row], i) => {
      insertExecution.run(name, row.state, row.reason);
      insertMove.run(`t${i}a`, name, null, 'awaiting_approval', 'waits for approval');
      if (row.left_to) insertMove.run(`t${i}b`, name, 'awaiting_approval', row.left_to, row.left_because);
      // An approved run's later moves are its own, not its approval's.
      if (row.left_to === 'queued' && row.state !== 'queued') insertMove.run(`t${i}c`, name, 'queued', row.state, row.reason);
    });
    queries.length = 0;
    const standings = await approvalStandings(db, [...CASES.map(([name]) => name), 'gone']);
    expect(queries).toHaveLength(1);
    expect(standings).toEqual(new Map(CASES.map(([name, , standing]) => [name, standing])));
    expect(standings.has('gone')).toBe(false);
  });

  it('reads nothing for no executions', async () => {
    queries.length = 0;
    expect(await approvalStandings(db, [])).toEqual(new Map());
    expect(queries).toEqual([]);
  });
});
