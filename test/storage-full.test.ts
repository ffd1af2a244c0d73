import { execFileSync } from 'node:child_process';
import fs from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { sql } from 'kysely';
import { describe, expect, it } from 'vitest';
import { openStore } from '../src/store/database.js';
import { migrateToLatest } from '../src/store/migrations.js';
import { isDiskFull } from '../src/store/faults.js';
import { startTestEnv } from './support/app.js';
import type { TestDatabase } from './support/databases.js';

describe('isDiskFull', () => {
  it("knows SQLite's and PostgreSQL's words for a full disk, and nothing else", () => {
    expect(isDiskFull({ code: 'SQLITE_FULL' })).toBe(true);
    expect(isDiskFull({ code: '53100' })).toBe(true); // PostgreSQL disk_full
    for (const other of [{ code: 'SQLITE_BUSY' }, { code: '57P01' }, new Error('x'), null, undefined, 'SQLITE_FULL']) expect(isDiskFull(other)).toBe(false);
  });
});

// The disk under SQLite fills up, for real: the data directory on a tmpfs of 2 MiB. Mounting
// needs root (CI runs as root).
describe.runIf(process.getuid?.() === 0)('a full disk under SQLite', () => {
  it('refuses events with the cause in the reply and the log, keeps later writes durable, and takes events again once there is room', async () => {
    const dataDir = fs.mkdtempSync(path.join(os.tmpdir(), 'pitcrew-full-'));
    execFileSync('mount', ['-t', 'tmpfs', '-o', 'size=2m', 'tmpfs', dataDir]);
    const setup = openStore({ dataDir });
    await migrateToLatest(setup);
    await setup.close();
    const database: TestDatabase = {
      dialect: 'sqlite', dataDir, env: { PITCREW_DATA_DIR: dataDir },
      open: (options) => openStore({ dataDir, ...options }),
      drop: async () => undefined,
    };
    const env = await startTestEnv('sqlite', { database });
    const filler = path.join(dataDir, 'filler');
    try {
      const rule = await env.createWebhookRule();
      expect((await env.webhook(rule.triggerId, { HostName: 'web-1' })).statusCode).toBe(202);
      expect(() => fs.writeFileSync(filler, Buffer.alloc(4 * 1024 * 1024, 1))).toThrow(/ENOSPC/);

      // Alerts with room for their rows in no page: the commit cannot grow the WAL.
      const big = { HostName: 'web-1', MetaData: { description: 'x'.repeat(100_000) } };
      let refused;
      for (let i = 0; i < 20 && !refused; i += 1) {
        const reply = await env.webhook(rule.triggerId, big);
        if (reply.statusCode !== 202) refused = reply;
      }
      expect(refused?.statusCode).toBe(503);
      expect(refused?.headers['retry-after']).toBe('1');
      expect(refused?.json()).toMatchObject({
        code: 'PITCREW_ERR_STORAGE_UNAVAILABLE',
        detail: "the service's storage is full, so nothing was recorded; retry once its operator has freed disk space",
      });
      const logs = env.logs.join('');
      expect(logs).toContain("event not stored: the database's disk is full. Free space there, or delete old history with PITCREW_RETENTION_DAYS");
      expect(logs).toContain('database or disk is full');
      expect(logs).not.toContain('cannot rollback');
      // The failed group commit set synchronous back to FULL: the writes that follow are synced.
      expect((await sql<{ synchronous: number }>`pragma synchronous`.execute(env.store.db)).rows[0]?.synchronous).toBe(2);

      // Once someone frees the disk, events are taken again, with no restart.
      fs.rmSync(filler);
      const back = await env.webhook(rule.triggerId, big);
      expect(back.statusCode, back.body).toBe(202);
      expect((await env.api('GET', `/api/v1/events/${back.json().eventId}`)).json().payload.MetaData.description).toHaveLength(100_000);
    } finally {
      await env.close();
      execFileSync('umount', ['-l', dataDir]);
      fs.rmSync(dataDir, { recursive: true, force: true });
    }
  });
});
