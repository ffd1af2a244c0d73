import SqliteDatabase from 'better-sqlite3';
import { describe, expect, it } from 'vitest';
import { isConnectionLost, isRefusedData } from './faults.js';

describe('isRefusedData', () => {
  it('knows SQLite refusing too many parameters, from SQLite itself', () => {
    const sqlite = new SqliteDatabase(':memory:');
    let error: unknown;
    try {
      sqlite.prepare(`select 1 where 1 in (${Array(40_000).fill('?').join(',')})`);
    } catch (caught) {
      error = caught;
    }
    sqlite.close();
    expect(isRefusedData(error)).toBe(true);
  });

  it.each([
    [{ code: 'SQLITE_CONSTRAINT_UNIQUE', message: 'UNIQUE constraint failed' }, true],
    [{ code: 'SQLITE_TOOBIG', message: 'string or blob too big' }, true],
    [{ code: '22021', message: 'invalid byte sequence for encoding "UTF8": 0x00' }, true],
    [{ code: '54000', message: 'index row size 3000 exceeds btree version 4 maximum 2704' }, true],
    [{ code: '08P01', message: 'bind message has 4464 parameter formats but 0 parameters' }, true],
    // Every call's problem, not one call's: the batch fails as a whole.
    [{ code: 'SQLITE_FULL', message: 'database or disk is full' }, false],
    [{ code: 'SQLITE_BUSY', message: 'database is locked' }, false],
    [{ code: 'SQLITE_ERROR', message: 'no such table: events' }, false],
    [{ code: '53100', message: 'could not extend file' }, false],
    [{ code: '08P01', message: 'unexpected message type' }, false],
    [{ code: 'ECONNREFUSED', message: 'connect ECONNREFUSED' }, false],
    [new Error('Connection terminated unexpectedly'), false],
    [undefined, false],
  ])('%j: %s', (error, refused) => {
    expect(isRefusedData(error)).toBe(refused);
  });
});

describe('isConnectionLost', () => {
  const error = (code: string | undefined, message: string) => Object.assign(new Error(message), code === undefined ? {} : { code });

  it.each([
    [error('57P01', 'terminating connection due to administrator command'), true],
    [error('08006', 'connection failure'), true],
    [error('ECONNREFUSED', 'connect ECONNREFUSED 127.0.0.1:5432'), true],
    [error(undefined, 'Connection terminated unexpectedly'), true],
    // Class 08 too, but the data's fault on a connection that stays up: a 500, never a 503 to retry.
    [error('08P01', 'bind message has 4464 parameter formats but 0 parameters'), false],
    [error('23505', 'duplicate key value violates unique constraint'), false],
    [{ code: '57P01', message: 'not an Error' }, false],
  ])('%s: %s', (failure, lost) => {
    expect(isConnectionLost(failure)).toBe(lost);
  });
});
