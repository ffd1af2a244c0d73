import fs from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { afterAll, describe, expect, it } from 'vitest';
import { runCli, startServer } from './support/process.js';

const dataDir = fs.mkdtempSync(path.join(os.tmpdir(), 'pitcrew-cli-'));
const env = { PITCREW_DATA_DIR: dataDir };

afterAll(() => fs.rmSync(dataDir, { recursive: true, force: true }));

describe('pitcrew command', () => {
  it('migrate creates the database, then finds it up to date', async () => {
    const first = await runCli(['migrate'], env);
    expect(first.code).toBe(0);
    expect(first.stdout).toMatch(/applied 0001_initial/);
    expect(fs.existsSync(path.join(dataDir, 'pitcrew.db'))).toBe(true);
    const second = await runCli(['migrate'], env);
    expect(second.stdout).toMatch(/up to date/);
  });

  it('bootstrap --json creates the tenant once and issues a new key and token each time', async () => {
    const first = await runCli(['bootstrap', '--json'], env);
    expect(first.code).toBe(0);
    const a = JSON.parse(first.stdout);
    // The fixed contract (DESIGN.md §7) plus what the key may do: both, for the quick start.
    expect(Object.keys(a).sort()).toEqual(['apiKey', 'apiKeyScopes', 'tenantId', 'token']);
    expect(a.apiKey).toMatch(/^[0-9a-f]{64}$/);
    expect(a.apiKeyScopes).toEqual(['webhook', 'enrol']);

    const b = JSON.parse((await runCli(['bootstrap', '--json'], env)).stdout);
    expect(b.tenantId).toBe(a.tenantId);
    expect(b.apiKey).not.toBe(a.apiKey);
    expect(b.token).not.toBe(a.token);

    const other = JSON.parse((await runCli(['bootstrap', '--json', '--tenant', 'team-b'], env)).stdout);
    expect(other.tenantId).not.toBe(a.tenantId);
  });

  it('the issued token and key work against the running server', async () => {
    const { apiKey, token } = JSON.parse((await runCli(['bootstrap', '--json'], env)).stdout);
    const server = await startServer(env);
    try {
      const tenant = await fetch(`${server.url}/api/v1/tenant`, { headers: { authorization: `Bearer ${token}` } });
      expect(tenant.status).toBe(200);
      expect(((await tenant.json()) as { name: string }).name).toBe('default');
      const keys = (await (await fetch(`${server.url}/api/v1/api-keys`, { headers: { authorization: `Bearer ${token}` } })).json()) as { items: Array<{ hint: string }> };
      expect(keys.items.some((k) => k.hint === apiKey.slice(-4))).toBe(true);
    } finally {
      await server.stop();
    }
    expect(server.child.exitCode).toBe(0);
    expect(server.output()).toContain('stopping');
  });

  it('explains a mistake in the command or the environment, with exit code 2', async () => {
    const unknown = await runCli(['serve'], env);
    expect(unknown.code).toBe(2);
    expect(unknown.stderr).toMatch(/unknown command "serve"/);
    expect(unknown.stderr).toMatch(/bootstrap --json/);

    const badPort = await runCli(['server'], { ...env, PORT: 'eighty' });
    expect(badPort.code).toBe(2);
    expect(badPort.stderr).toMatch(/PORT must be a whole number/);

    const badUrl = await runCli(['migrate'], { ...env, DATABASE_URL: 'mysql://x' });
    expect(badUrl.code).toBe(2);
    expect(badUrl.stderr).toMatch(/DATABASE_URL must start with postgres/);

    const badFlag = await runCli(['bootstrap', '--jsn'], env);
    expect(badFlag.code).toBe(2);
    expect(badFlag.stderr).toMatch(/--jsn/);
  });
});
