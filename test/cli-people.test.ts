import fs from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { totpCode } from '../src/identity/totp.js';
import { PASSWORD } from './support/people.js';
import { runCli, startServer, type ServerProcess } from './support/process.js';

const dataDir = fs.mkdtempSync(path.join(os.tmpdir(), 'pitcrew-cli-people-'));

// `pitcrew users` and `pitcrew tokens` as processes against a running server (issue 37).
describe('pitcrew users and tokens', { timeout: 90_000 }, () => {
  let server: ServerProcess;
  let owner: string;
  const cli = (args: string[], token = owner) => runCli(args, { PITCREW_SERVER: server.url, PITCREW_TOKEN: token });
  const post = (url: string, body: unknown, headers: Record<string, string> = {}, method = 'POST') =>
    fetch(`${server.url}${url}`, { method, headers: { 'content-type': 'application/json', ...headers }, body: JSON.stringify(body) });

  beforeAll(async () => {
    ({ token: owner } = JSON.parse((await runCli(['bootstrap', '--json'], { PITCREW_DATA_DIR: dataDir })).stdout));
    server = await startServer({ PITCREW_DATA_DIR: dataDir });
  });
  afterAll(async () => {
    await server?.stop();
    fs.rmSync(dataDir, { recursive: true, force: true });
  });

  it('invites a member, changes the role, and a token of theirs is held to it', async () => {
    const invited = await cli(['users', 'invite', 'ops@example.com', '--role', 'operator']);
    expect(invited.code, invited.stderr).toBe(0);
    expect(invited.stdout).toMatch(/^http:\/\/127\.0\.0\.1:\d+\/accept\/[\w-]{40,}\ninvited ops@example\.com as operator \(([0-9a-f-]{36})\): the link works once, for 7 days; not e-mailed: the tenant has no e-mail channel/);
    const id = /\(([0-9a-f-]{36})\)/.exec(invited.stdout)![1]!;
    const listed = await cli(['users', 'list']);
    expect(listed.stdout).toMatch(new RegExp(`${id}\\s+ops@example\\.com\\s+operator\\s+invited\\s+no\\s+never`));
    expect((await cli(['users', 'role', id, '--role', 'viewer'])).stdout).toBe('ops@example.com is now viewer\n');

    const mine = await cli(['tokens', 'create', '--name', 'read only', '--role', 'viewer']);
    expect(mine.code, mine.stderr).toBe(0);
    const token = mine.stdout.split('\n')[0]!;
    expect(token).toMatch(/^pct_[0-9a-f]{64}$/);
    const refused = await cli(['users', 'list'], token);
    expect(refused.code).toBe(1);
    expect(refused.stderr).toMatch(/this needs the admin role in this tenant; you act as viewer/);
    const tokens = await cli(['tokens', 'list']);
    expect(tokens.stdout).toMatch(/read only\s+viewer\s+never\s+\S+\s+active/);
    const tokenId = /issued token "read only" \(([0-9a-f-]{36})\)/.exec(mine.stdout)![1]!;
    expect((await cli(['tokens', 'revoke', tokenId])).code).toBe(0);
    expect((await cli(['tokens', 'list'], token)).stderr).toMatch(/unknown, expired or revoked/);
    expect((await cli(['users', 'remove', id])).stdout).toBe(`removed ${id} from the tenant\n`);
  });

  it("removes a member's lost second factor, named by e-mail: they sign in with the password alone", async () => {
    const invited = await cli(['users', 'invite', 'lost@example.com', '--role', 'viewer', '--json']);
    const { id, inviteUrl } = JSON.parse(invited.stdout) as { id: string; inviteUrl: string };
    const accepted = await post('/api/v1/auth/accept', { invite: inviteUrl.split('/').pop(), password: PASSWORD });
    const session = { cookie: accepted.headers.get('set-cookie')!.split(';')[0]!, 'x-pitcrew-csrf': ((await accepted.json()) as { csrfToken: string }).csrfToken };
    const { secret } = (await (await post('/api/v1/me/totp', {}, session)).json()) as { secret: string };
    expect((await post('/api/v1/me/totp', { secret, code: totpCode(secret, Date.now()) }, session, 'PUT')).status).toBe(204);
    expect((await cli(['users', 'list'])).stdout).toMatch(new RegExp(`${id}\\s+lost@example\\.com\\s+viewer\\s+active\\s+yes`));
    expect((await post('/api/v1/auth/login', { email: 'lost@example.com', password: PASSWORD })).status).toBe(401);

    const reset = await cli(['users', 'reset-second-factor', 'Lost@Example.com']);
    expect(reset.code, reset.stderr).toBe(0);
    expect(reset.stdout).toMatch(/^removed the second factor of lost@example\.com: they sign in with their password alone, and may set up a new one; 1 session\(s\) signed out; not e-mailed: the tenant has no e-mail channel .*tell them yourself\n$/);
    expect((await cli(['users', 'list'])).stdout).toMatch(new RegExp(`${id}\\s+lost@example\\.com\\s+viewer\\s+active\\s+no`));
    expect((await post('/api/v1/auth/login', { email: 'lost@example.com', password: PASSWORD })).status).toBe(200);
    const again = await cli(['users', 'reset-second-factor', id]);
    expect(again.code).toBe(1);
    expect(again.stderr).toMatch(/this member has no second factor.*\(PITCREW_ERR_CONFLICT\)/);
    const unknown = await cli(['users', 'reset-second-factor', 'nobody@example.com']);
    expect(unknown.stderr).toMatch(/no member of this tenant has the e-mail nobody@example.com; `pitcrew users list` shows them/);
  });

  it('lists every token, beyond the 1000 a page of the API holds', async () => {
    // Issued through the API, 20 at a time: more than one page of the largest size.
    const names = Array.from({ length: 1001 }, (_, i) => `bulk ${String(i).padStart(4, '0')}`);
    for (let i = 0; i < names.length; i += 20) {
      await Promise.all(names.slice(i, i + 20).map(async (name) => {
        const response = await fetch(`${server.url}/api/v1/tokens`, { method: 'POST', headers: { authorization: `Bearer ${owner}`, 'content-type': 'application/json' }, body: JSON.stringify({ name }) });
        expect(response.status).toBe(201);
      }));
    }
    const listed = await cli(['tokens', 'list', '--json']);
    expect(listed.code, listed.stderr).toBe(0);
    const items = (JSON.parse(listed.stdout) as { items: Array<{ name: string }> }).items.map((t) => t.name);
    expect(items.filter((name) => name.startsWith('bulk ')).sort()).toEqual(names);
    expect(new Set(items).size).toBe(items.length);
    const table = await cli(['tokens', 'list']);
    expect(table.stdout.trimEnd().split('\n')).toHaveLength(1 + items.length);
  });
});
