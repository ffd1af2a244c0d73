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

  it('bootstrap --json creates the tenant and issues a key and token; run again it refuses, and --new issues others, leaving the earlier valid', async () => {
    const first = await runCli(['bootstrap', '--json'], env);
    expect(first.code).toBe(0);
    expect(first.stderr).toBe('');
    const a = JSON.parse(first.stdout);
    // The fixed contract (DESIGN.md §7) plus what the key may do: both, for the quick start.
    expect(Object.keys(a).sort()).toEqual(['apiKey', 'apiKeyScopes', 'signInUrl', 'tenantId', 'token']);
    expect(a.apiKey).toMatch(/^[0-9a-f]{64}$/);
    // The first owner's one-time link (issue 37): no default password; PORT makes its base.
    expect(a.signInUrl).toMatch(/^http:\/\/localhost:8080\/accept\/[\w-]{40,}$/);
    expect(a.apiKeyScopes).toEqual(['webhook', 'enrol']);

    // Run again by mistake (a second read of the quick start): nothing issued, and it says what to do.
    const again = await runCli(['bootstrap', '--json'], env);
    expect(again).toMatchObject({ code: 1, stdout: '' });
    expect(again.stderr).toBe([
      `pitcrew: tenant "default" (${a.tenantId}) exists already: nothing was issued. Still valid from before: 1 API key and 1 management token.`,
      'See its API keys with npx pitcrew api-keys list; revoke one on the UI\'s API keys page (Revoke and regenerate)',
      'or with POST /api/v1/api-keys/{id}/revoke; a management token: docs/security.md#rotating-credentials.',
      'To issue another API key (webhook and enrol) and management token for it: npx pitcrew bootstrap --json --new',
      '',
    ].join('\n'));

    const renewed = await runCli(['bootstrap', '--json', '--new'], env);
    expect(renewed.code).toBe(0);
    const b = JSON.parse(renewed.stdout);
    expect(b.tenantId).toBe(a.tenantId);
    expect(b.apiKey).not.toBe(a.apiKey);
    expect(b.token).not.toBe(a.token);
    // Nobody claimed the first link yet: another one, for the same owner.
    expect(b.signInUrl).toMatch(/\/accept\//);
    expect(b.signInUrl).not.toBe(a.signInUrl);
    expect(renewed.stderr).toMatch(/^pitcrew: tenant "default" exists: issued another API key and management token for it\. Still valid from before: 1 API key and 1 management token\.\nSee its API keys with npx pitcrew api-keys list;/);
    expect((await runCli(['bootstrap', '--json'], env)).stderr).toMatch(/Still valid from before: 2 API keys and 2 management tokens\./);

    const other = await runCli(['bootstrap', '--json', '--tenant', 'team b', '--new'], env);
    expect(other.stderr).toBe('');
    expect(JSON.parse(other.stdout).tenantId).not.toBe(a.tenantId);
    expect((await runCli(['bootstrap', '--tenant', 'team b'], env)).stderr).toMatch(/npx pitcrew bootstrap --json --tenant 'team b' --new\n$/);
  });

  it('the issued token and key work against the running server', async () => {
    const { apiKey, token } = JSON.parse((await runCli(['bootstrap', '--json', '--new'], env)).stdout);
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
