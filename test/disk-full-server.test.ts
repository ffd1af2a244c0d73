import { execFileSync } from 'node:child_process';
import fs from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import SqliteDatabase from 'better-sqlite3';
import { describe, expect, it } from 'vitest';
import { scriptRule } from './support/app.js';
import { runCli, startServer, type ServerProcess } from './support/process.js';
import { waitFor } from './support/wait.js';

/*
 * A full disk under the running server (issue 40, docs/operations.md#a-full-disk): the data
 * directory on a tmpfs of 32 MiB the test mounts (as root, as CI runs), filled by the events
 * themselves. A warning comes first (PITCREW_DISK_WARN_FREE); below the reserve webhooks are
 * answered 503 with Retry-After and the readiness probe says why; nothing answered 202 is lost,
 * the database passes SQLite's integrity check, and once space is freed everything resumes by
 * itself, with no restart.
 */
describe.runIf(process.getuid?.() === 0)('the server on a disk that fills', () => {
  it('warns, refuses with 503, loses nothing, and resumes when space is freed', { timeout: 120_000 }, async () => {
    const dataDir = fs.mkdtempSync(path.join(os.tmpdir(), 'pitcrew-disk-'));
    execFileSync('mount', ['-t', 'tmpfs', '-o', 'size=32m', 'tmpfs', dataDir]);
    let server: ServerProcess | undefined;
    try {
      const bootstrap = await runCli(['bootstrap', '--json'], { PITCREW_DATA_DIR: dataDir });
      expect(bootstrap.code, bootstrap.stderr).toBe(0);
      const { apiKey, token } = JSON.parse(bootstrap.stdout) as { apiKey: string; token: string };
      // Room the operator can free later: 8 MiB of something else on the same disk.
      const filler = path.join(dataDir, 'old-logs.tar');
      fs.writeFileSync(filler, Buffer.alloc(8 * 1024 * 1024, 1));
      server = await startServer({ PITCREW_DATA_DIR: dataDir, PITCREW_DISK_WARN_FREE: '14MiB', PITCREW_DISK_RESERVE: '6MiB' });
      const running = server;
      const made = await fetch(`${running.url}/api/v1/rules`, { method: 'POST', headers: { authorization: `Bearer ${token}`, 'content-type': 'application/json' }, body: JSON.stringify(scriptRule()) });
      const { trigger } = (await made.json()) as { trigger: { triggerId: string } };
      const hook = `${running.url}/api/v1/trigger/channel/webhook/${apiKey}/${trigger.triggerId}`;
      const post = () => fetch(hook, { method: 'POST', headers: { 'content-type': 'application/json' }, body: JSON.stringify({ HostName: 'web-1', Act: false, MetaData: { description: 'x'.repeat(50_000) } }) });

      const acknowledged: string[] = [];
      let refused: Response | undefined;
      for (let i = 0; i < 1000 && !refused; i++) {
        const reply = await post();
        if (reply.status === 202) acknowledged.push(((await reply.json()) as { eventId: string }).eventId);
        else refused = reply;
      }
      expect(acknowledged.length).toBeGreaterThan(10);
      expect(refused?.status).toBe(503);
      expect(refused?.headers.get('retry-after')).toBe('1');
      expect(refused?.headers.get('content-type')).toContain('application/problem+json');
      expect(((await refused!.json()) as { detail: string }).detail).toBe("the service's storage is full, so nothing was recorded; retry once its operator has freed disk space");

      // The warning came before the refusals; the probe and the metrics say why. The log lines reach
      // this process through the child's stdout, a moment after the 503 that followed them.
      await waitFor(() => running.output().includes('below its reserve'), 'the log line of the full disk');
      const output = running.output();
      const warned = output.indexOf('below PITCREW_DISK_WARN_FREE');
      expect(warned).toBeGreaterThan(-1);
      const ready = await fetch(`${running.url}/readyz`);
      expect(ready.status).toBe(503);
      expect(((await ready.json()) as { detail: string }).detail).toMatch(/^the data directory's disk \(.+\) has [\d.]+ (KiB|bytes|MiB) free, below its reserve of 6\.0 MiB \(PITCREW_DISK_RESERVE\)/);
      expect(output.indexOf('below its reserve')).toBeGreaterThan(warned);
      const metrics = await (await fetch(`${running.metricsUrl}/metrics`)).text();
      expect(metrics).toMatch(/^pitcrew_data_dir_full 1$/m);
      expect(metrics).toMatch(/^pitcrew_data_dir_low_space 1$/m);

      // Space freed: taken again by itself, no restart.
      fs.rmSync(filler);
      await waitFor(async () => (await fetch(`${running.url}/readyz`)).status === 200, 'ready again once space was freed', 15_000);
      const back = await post();
      expect(back.status).toBe(202);
      acknowledged.push(((await back.json()) as { eventId: string }).eventId);
      expect(running.output()).toContain('free (');

      await running.stop();
      server = undefined;
      const db = new SqliteDatabase(path.join(dataDir, 'pitcrew.db'), { readonly: true });
      try {
        expect(db.pragma('integrity_check', { simple: true })).toBe('ok');
        const stored = new Set(db.prepare('select id from events').pluck().all() as string[]);
        for (const id of acknowledged) expect(stored.has(id), `event ${id} answered 202`).toBe(true);
      } finally {
        db.close();
      }
    } finally {
      await server?.kill();
      execFileSync('umount', ['-l', dataDir]);
      fs.rmSync(dataDir, { recursive: true, force: true });
    }
  });
});
