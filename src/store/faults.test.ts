import SqliteDatabase from 'better-sqlite3';
import { describe, expect, it } from 'vitest';
import { isRefusedData } from './faults.js';

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
