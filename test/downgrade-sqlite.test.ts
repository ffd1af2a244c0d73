import { randomBytes } from 'node:crypto';
import fs from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import Database from 'better-sqlite3';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { testDialects } from './support/databases.js';
import { buildPreviousRelease, type PreviousBuild } from './support/previous-release.js';
import { runCli, startServer, type ServerProcess } from './support/process.js';

/*
 * docs/operations.md, "When an upgrade fails": a single node on SQLite that misbehaves after
 * migrating goes back to the previous release's binary, on the schema this release made. SQLite's
 * `indexed by` fails to prepare a statement whose index is gone ("no such index"), so an index the
 * previous release names must still exist, under its name, after this release's migrations.
 */
describe.skipIf(!testDialects().includes('sqlite'))('going back to the previous release on SQLite', () => {
  let previous: PreviousBuild;
  const dirs: string[] = [];
  const servers: ServerProcess[] = [];
  const tempDir = () => {
    const dir = fs.mkdtempSync(path.join(os.tmpdir(), 'pitcrew-downgrade-'));
    dirs.push(dir);
    return dir;
  };

  beforeAll(async () => {
    previous = await buildPreviousRelease();
  }, 900_000);
  afterAll(async () => {
    for (const server of servers) await server.stop();
    for (const dir of dirs) fs.rmSync(dir, { recursive: true, force: true });
  });

  /** The indexes of the schema `bin` migrates an empty data directory to. */
  const indexesMadeBy = async (bin: string | undefined): Promise<Set<string>> => {
    const dataDir = tempDir();
    const migrated = await runCli(['migrate'], { PITCREW_DATA_DIR: dataDir }, { bin });
    expect(migrated.code, migrated.stderr).toBe(0);
    const db = new Database(path.join(dataDir, 'pitcrew.db'), { readonly: true });
    try {
      return new Set((db.prepare("select name from sqlite_master where type = 'index' and name not like 'sqlite_%'").all() as Array<{ name: string }>).map((r) => r.name));
    } finally {
      db.close();
    }
  };

  it('keeps every index the previous release names in its code', async () => {
    const [before, after] = [await indexesMadeBy(previous.bin), await indexesMadeBy(undefined)];
    const code = sourcesOf(path.join(previous.root, 'src')).filter((file) => !file.includes(`${path.sep}migrations${path.sep}`))
      .map((file) => fs.readFileSync(file, 'utf8')).join('\n');
    const named = [...before].filter((name) => new RegExp(`\\b${name}\\b`).test(code));
    expect(named.length).toBeGreaterThan(0);
    expect(named.filter((name) => !after.has(name))).toEqual([]);
  });

  it("serves its incidents and analytics on this release's schema, resolutions of both releases in it", async () => {
    const dataDir = tempDir();
    const env = { PITCREW_DATA_DIR: dataDir, PITCREW_SECRET_KEY: randomBytes(32).toString('base64') };
    const boot = await runCli(['bootstrap', '--json'], env);
    expect(boot.code, boot.stderr).toBe(0);
    const { apiKey, token } = JSON.parse(boot.stdout) as { apiKey: string; token: string };
    const api = async (server: ServerProcess, method: string, url: string, body?: unknown) => {
      const response = await fetch(`${server.url}${url}`, {
        method, headers: { authorization: `Bearer ${token}`, ...(body ? { 'content-type': 'application/json' } : {}) }, body: body ? JSON.stringify(body) : undefined,
      });
      return { status: response.status, body: await response.json() as Record<string, unknown> };
    };
    const day = Date.UTC(2026, 10, 20);
    /** An Alertmanager notification of one alert that fired at `from` and, with `to`, resolved then. */
    const notify = async (server: ServerProcess, integrationId: string, host: string, from: number, to?: number) => {
      const alert = {
        status: to === undefined ? 'firing' : 'resolved', labels: { alertname: 'DiskFull', instance: `${host}:9100`, severity: 'critical' }, annotations: {},
        startsAt: new Date(from).toISOString(), endsAt: to === undefined ? '0001-01-01T00:00:00Z' : new Date(to).toISOString(), fingerprint: `${host}-${from}`,
      };
      const response = await fetch(`${server.url}/api/v1/trigger/channel/alertmanager/${apiKey}/${integrationId}`, {
        method: 'POST', headers: { 'content-type': 'application/json' },
        body: JSON.stringify({ version: '4', status: alert.status, receiver: 'pitcrew', groupKey: '{}:{}', alerts: [alert] }),
      });
      expect(response.status, await response.text()).toBe(202);
    };

    // This release migrates and resolves incidents; then the previous one runs on its schema and resolves more.
    const current = await startServer(env);
    servers.push(current);
    const integrationId = (await api(current, 'POST', '/api/v1/integrations', { name: 'am', type: 'alertmanager' })).body.id as string;
    for (const [i, host] of ['web-1', 'web-2'].entries()) {
      await notify(current, integrationId, host, day + i * 60_000);
      await notify(current, integrationId, host, day + i * 60_000, day + (i + 1) * 600_000);
    }
    await current.stop();
    const old = await startServer(env, { bin: previous.bin });
    servers.push(old);
    await notify(old, integrationId, 'web-1', day + 3_600_000);
    await notify(old, integrationId, 'web-1', day + 3_600_000, day + 4_800_000);

    const from = new Date(day - 86_400_000).toISOString();
    const to = new Date(day + 2 * 86_400_000).toISOString();
    const resolved = await api(old, 'GET', '/api/v1/incidents?state=resolved');
    expect(resolved.status, JSON.stringify(resolved.body)).toBe(200);
    expect(resolved.body.items).toHaveLength(3);
    for (const filter of ['', '&hostname=web-1', '&alarmName=DiskFull', `&integrationId=${integrationId}`]) {
      const analytics = await api(old, 'GET', `/api/v1/incidents/analytics?from=${from}&to=${to}${filter}`);
      expect(analytics.status, `${filter}: ${JSON.stringify(analytics.body)}`).toBe(200);
      expect(analytics.body.frequent, filter).toEqual([{ alarmName: 'DiskFull', count: filter === '&hostname=web-1' ? 2 : 3 }]);
    }
    // The analytics recomputed the days its own resolution marked stale (incidents/rollup.ts) on the way.
    expect(old.output()).not.toMatch(/no such index|no query solution/);
  }, 180_000);
});

/** Every .ts file under `dir`. */
function sourcesOf(dir: string): string[] {
  return fs.readdirSync(dir, { recursive: true, withFileTypes: true })
    .filter((entry) => entry.isFile() && entry.name.endsWith('.ts'))
    .map((entry) => path.join(entry.parentPath, entry.name));
}
