import { createHash } from 'node:crypto';
import fs from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { runRunbooks } from '../src/cli/runbooks.js';
import { deleteRunbook } from '../src/runbooks/repository.js';
import { startTestEnv, type TestEnv } from './support/app.js';
import { testDialects } from './support/databases.js';
import { expectProblem } from './support/problems.js';

/*
 * Issue 20, the runbook store: every save is an immutable version, kept byte for byte; a save equal
 * to the latest version makes none; versions list newest first and diff as unified diffs; each
 * tenant sees only its own runbooks (docs/runbooks.md).
 */
const V1 = '#!/bin/sh\nset -e\ndf -h /\nrm -rf /tmp/cache/*\necho done\n';
const V2 = '#!/bin/sh\nset -eu\ndf -h /\nfind /tmp/cache -mtime +7 -delete\necho done\n';
const V1_TO_V2 = [
  '--- version 1',
  '+++ version 2',
  '@@ -1,5 +1,5 @@',
  ' #!/bin/sh',
  '-set -e',
  '+set -eu',
  ' df -h /',
  '-rm -rf /tmp/cache/*',
  '+find /tmp/cache -mtime +7 -delete',
  ' echo done',
  '',
].join('\n');
const sha256 = (text: string) => createHash('sha256').update(Buffer.from(text, 'utf8')).digest('hex');
const ISO = expect.stringMatching(/^\d{4}-\d\d-\d\dT/);

describe.each(testDialects())('the runbook store on %s', (dialect) => {
  let env: TestEnv;
  let tokenId: string;

  beforeAll(async () => {
    env = await startTestEnv(dialect);
    tokenId = (await env.store.db.selectFrom('tokens').select('id').where('tenant_id', '=', env.tenant.tenantId).executeTakeFirstOrThrow()).id;
  });
  afterAll(() => env.close());

  const create = (body: Record<string, unknown>, token?: string) => env.api('POST', '/api/v1/runbooks', body, token);
  const versionRows = (runbookId: string) => env.store.db.selectFrom('runbook_versions').selectAll().where('runbook_id', '=', runbookId).orderBy('version').execute();

  it('stores a runbook as version 1 with the sha256 of its UTF-8 bytes, and fills in the defaults', async () => {
    const script = "#!/bin/bash\necho 'disque plein ✓' >&2\n";
    const made = await create({ name: 'disk full', description: '# Disk full\nFrees *space*.', interpreter: 'bash', script, env: ['HostName', 'DiskPath'] });
    expect(made.statusCode, made.body).toBe(201);
    const body = made.json();
    expect(made.headers.location).toBe(`/api/v1/runbooks/${body.id}`);
    expect(body).toEqual({
      id: expect.any(String), version: 1, name: 'disk full', description: '# Disk full\nFrees *space*.', interpreter: 'bash', script, env: ['HostName', 'DiskPath'],
      sha256: sha256(script), createdAt: ISO, createdBy: tokenId, updatedAt: body.createdAt, updatedBy: tokenId, versionCreated: true,
    });
    const { versionCreated: _, ...view } = body;
    expect((await env.api('GET', `/api/v1/runbooks/${body.id}`)).json()).toEqual(view);

    const plain = (await create({ name: '  restart nginx ', script: 'systemctl restart nginx' })).json();
    expect(plain).toMatchObject({ name: 'restart nginx', version: 1, description: '', interpreter: 'sh', env: [], sha256: sha256('systemctl restart nginx') });
  });

  it('lists runbooks oldest first without their scripts, searches names in any case, and pages', async () => {
    for (const name of ['list: Disk cleanup', 'list: restart nginx', 'list: 100%_disk']) expect((await create({ name, script: 'true' })).statusCode).toBe(201);
    const all = (await env.api('GET', '/api/v1/runbooks?search=list:')).json();
    expect(all.items.map((r: { name: string }) => r.name)).toEqual(['list: Disk cleanup', 'list: restart nginx', 'list: 100%_disk']);
    expect(all.items[0]).toEqual({ id: expect.any(String), name: 'list: Disk cleanup', version: 1, interpreter: 'sh', env: [], sha256: sha256('true'), createdAt: ISO, updatedAt: ISO });
    expect((await env.api('GET', '/api/v1/runbooks?search=DISK')).json().items.map((r: { name: string }) => r.name)).toEqual(['disk full', 'list: Disk cleanup', 'list: 100%_disk']);
    // % and _ are the text itself, not LIKE's wildcards.
    expect((await env.api('GET', '/api/v1/runbooks?search=0%25_')).json().items.map((r: { name: string }) => r.name)).toEqual(['list: 100%_disk']);

    const first = (await env.api('GET', '/api/v1/runbooks?search=list:&limit=2')).json();
    expect(first.items.map((r: { name: string }) => r.name)).toEqual(['list: Disk cleanup', 'list: restart nginx']);
    const second = (await env.api('GET', `/api/v1/runbooks?search=list:&limit=2&cursor=${first.nextCursor}`)).json();
    expect(second).toEqual({ items: [expect.objectContaining({ name: 'list: 100%_disk' })], nextCursor: null });
    expectProblem(await env.api('GET', '/api/v1/runbooks?cursor=bm9wZQ'), 400, 'PITCREW_ERR_BAD_CURSOR');
  });

  it('saves each change as the next version and keeps the earlier ones byte for byte', async () => {
    const odd = 'echo "tabs\tand trailing blanks"   \r\nexit 0'; // CRLF, no final line feed
    const made = (await create({ name: 'cleanup', description: 'v1 notes', script: odd, env: ['HostName'] })).json();
    const saved = await env.api('PUT', `/api/v1/runbooks/${made.id}`, { name: 'cleanup', description: 'v2 notes', interpreter: 'bash', script: V2, env: ['HostName', 'Mount'] });
    expect(saved.statusCode, saved.body).toBe(200);
    expect(saved.json()).toMatchObject({ id: made.id, version: 2, versionCreated: true, script: V2, sha256: sha256(V2), createdAt: made.createdAt, createdBy: tokenId, updatedBy: tokenId });
    expect((await env.api('GET', `/api/v1/runbooks/${made.id}`)).json()).toMatchObject({ version: 2, description: 'v2 notes', script: V2 });

    const first = await env.api('GET', `/api/v1/runbooks/${made.id}/versions/1`);
    expect(first.json()).toEqual({
      runbookId: made.id, version: 1, name: 'cleanup', description: 'v1 notes', interpreter: 'sh', script: odd, env: ['HostName'], sha256: sha256(odd), createdAt: made.createdAt, createdBy: tokenId,
    });
    const rows = await versionRows(made.id);
    expect(rows.map((row) => [row.version, Buffer.from(row.script, 'utf8').equals(Buffer.from(row.version === 1 ? odd : V2, 'utf8'))])).toEqual([[1, true], [2, true]]);
    expect(rows.map((row) => row.sha256)).toEqual([sha256(odd), sha256(V2)]);

    const missing = expectProblem(await env.api('GET', `/api/v1/runbooks/${made.id}/versions/3`), 404, 'PITCREW_ERR_NOT_FOUND');
    expect(missing).toMatchObject({ detail: 'runbook "cleanup" has versions 1 to 2; there is no version 3', errors: [{ path: '/params/version', message: 'no version 3; the latest is 2' }] });
    expectProblem(await env.api('GET', `/api/v1/runbooks/${made.id}/versions/0`), 400, 'PITCREW_ERR_VALIDATION');
  });

  it('makes no version for a save equal to the latest one, and says so', async () => {
    const made = (await create({ name: 'same', script: V1, env: ['HostName'] })).json();
    // Defaults are part of the content: no interpreter is sh, no description is empty; the name is trimmed.
    for (const body of [{ name: 'same', script: V1, env: ['HostName'] }, { name: ' same ', interpreter: 'sh', description: '', script: V1, env: ['HostName'] }]) {
      const again = await env.api('PUT', `/api/v1/runbooks/${made.id}`, body);
      expect(again.statusCode, again.body).toBe(200);
      expect(again.json()).toMatchObject({ version: 1, versionCreated: false, updatedAt: made.updatedAt });
    }
    expect(await versionRows(made.id)).toHaveLength(1);
    // A changed list of expected names is a change, even with the same script.
    expect((await env.api('PUT', `/api/v1/runbooks/${made.id}`, { name: 'same', script: V1 })).json()).toMatchObject({ version: 2, versionCreated: true, env: [] });
  });

  it('lists versions newest first without scripts, page by page', async () => {
    const made = (await create({ name: 'history', script: 'echo 1' })).json();
    for (const n of [2, 3]) await env.api('PUT', `/api/v1/runbooks/${made.id}`, { name: 'history', script: `echo ${n}` });
    const first = await env.api('GET', `/api/v1/runbooks/${made.id}/versions?limit=2`);
    expect(first.statusCode, first.body).toBe(200);
    expect(first.json().items).toEqual([
      { version: 3, name: 'history', interpreter: 'sh', env: [], sha256: sha256('echo 3'), createdAt: ISO, createdBy: tokenId },
      expect.objectContaining({ version: 2, sha256: sha256('echo 2') }),
    ]);
    const second = (await env.api('GET', `/api/v1/runbooks/${made.id}/versions?limit=2&cursor=${first.json().nextCursor}`)).json();
    expect(second).toEqual({ items: [expect.objectContaining({ version: 1, sha256: sha256('echo 1') })], nextCursor: null });
    expectProblem(await env.api('GET', `/api/v1/runbooks/${made.id}/versions?cursor=${Buffer.from('0').toString('base64url')}`), 400, 'PITCREW_ERR_BAD_CURSOR');
  });

  it('diffs two versions: the fields that changed and the scripts as a unified diff', async () => {
    const made = (await create({ name: 'diffed', script: V1, env: ['HostName'] })).json();
    await env.api('PUT', `/api/v1/runbooks/${made.id}`, { name: 'diffed', description: 'now with notes', script: V2, env: ['HostName'] });
    const diff = await env.api('GET', `/api/v1/runbooks/${made.id}/diff?from=1&to=2`);
    expect(diff.statusCode, diff.body).toBe(200);
    expect(diff.json()).toEqual({ runbookId: made.id, from: 1, to: 2, changed: ['description', 'script'], diff: V1_TO_V2 });
    // By default the latest version against the one before.
    expect((await env.api('GET', `/api/v1/runbooks/${made.id}/diff`)).json()).toEqual(diff.json());
    const back = (await env.api('GET', `/api/v1/runbooks/${made.id}/diff?from=2&to=1`)).json();
    expect(back.diff).toBe('--- version 2\n+++ version 1\n@@ -1,5 +1,5 @@\n #!/bin/sh\n-set -eu\n+set -e\n df -h /\n-find /tmp/cache -mtime +7 -delete\n+rm -rf /tmp/cache/*\n echo done\n');
    expect((await env.api('GET', `/api/v1/runbooks/${made.id}/diff?from=2&to=2`)).json()).toMatchObject({ changed: [], diff: '' });

    await env.api('PUT', `/api/v1/runbooks/${made.id}`, { name: 'diffed again', interpreter: 'bash', description: 'now with notes', script: V2, env: ['HostName', 'Mount'] });
    expect((await env.api('GET', `/api/v1/runbooks/${made.id}/diff?from=2&to=3`)).json()).toMatchObject({ changed: ['name', 'interpreter', 'env'], diff: '' });
    const missing = expectProblem(await env.api('GET', `/api/v1/runbooks/${made.id}/diff?from=1&to=9`), 404, 'PITCREW_ERR_NOT_FOUND');
    expect(missing.errors).toEqual([{ path: '/query/to', message: 'no version 9; the latest is 3' }]);
    expect(expectProblem(await env.api('GET', `/api/v1/runbooks/${made.id}/diff?from=x`), 400, 'PITCREW_ERR_VALIDATION').errors).toEqual([{ path: '/querystring/from', message: 'must be integer' }]);
  });

  it('keeps names unique in the tenant: a 409 that names the runbook holding the name', async () => {
    const holder = (await create({ name: 'unique name', script: 'true' })).json();
    const taken = expectProblem(await create({ name: 'unique name', script: 'false' }), 409, 'PITCREW_ERR_CONFLICT');
    expect(taken).toMatchObject({
      detail: `runbook ${holder.id} is already named "unique name" in this tenant; save a new version of it with PUT /api/v1/runbooks/${holder.id}, or choose another name`,
      errors: [{ path: '/body/name', message: `already the name of runbook ${holder.id}` }],
    });
    const other = (await create({ name: 'other name', script: 'true' })).json();
    const renamed = expectProblem(await env.api('PUT', `/api/v1/runbooks/${other.id}`, { name: 'unique name', script: 'true' }), 409, 'PITCREW_ERR_CONFLICT');
    expect(renamed.detail).toBe(`runbook ${holder.id} is already named "unique name" in this tenant; choose another name`);
    expect(await versionRows(other.id)).toHaveLength(1);
    // A rename is a version; the old name is free again.
    expect((await env.api('PUT', `/api/v1/runbooks/${holder.id}`, { name: 'renamed', script: 'true' })).json()).toMatchObject({ version: 2, name: 'renamed' });
    expect((await create({ name: 'unique name', script: 'true' })).statusCode).toBe(201);
  });

  it('gives each of several saves at once its own version', async () => {
    const made = (await create({ name: 'raced', script: 'echo 0' })).json();
    const saves = await Promise.all([1, 2, 3, 4, 5].map((n) => env.api('PUT', `/api/v1/runbooks/${made.id}`, { name: 'raced', script: `echo ${n}` })));
    for (const save of saves) expect(save.statusCode, save.body).toBe(200);
    expect(saves.map((save) => save.json().version).sort()).toEqual([2, 3, 4, 5, 6]);
    const rows = await versionRows(made.id);
    expect(rows.map((row) => row.script).sort()).toEqual(['echo 0', 'echo 1', 'echo 2', 'echo 3', 'echo 4', 'echo 5']);
  });

  it.each([
    ['no name', { script: 'true' }, '/body/name', 'is required'],
    ['a blank name', { name: '   ', script: 'true' }, '/body/name', 'holds only blanks; give the runbook a name to find it by'],
    ['an empty script', { name: 'x', script: '' }, '/body/script', 'must NOT have fewer than 1 characters'],
    ['a script of blanks', { name: 'x', script: ' \n\t\n' }, '/body/script', 'holds only blanks; a runbook needs at least one command'],
    ['a script over 256 KiB', { name: 'x', script: 'x'.repeat(256 * 1024 + 1) }, '/body/script', 'must NOT have more than 262144 characters'],
    ['a NUL in the script', { name: 'x', script: 'echo a\u0000b' }, '/body/script', 'contains a NUL character (\\u0000), which pitcrew cannot store; remove it'],
    ['a lone surrogate in the notes', { name: 'x', script: 'true', description: 'bad \ud800' }, '/body/description', 'is not valid Unicode (a lone UTF-16 surrogate); send the text as UTF-8'],
    ['an unknown interpreter', { name: 'x', script: 'true', interpreter: 'perl' }, '/body/interpreter', 'must be one of "sh", "bash", "python", "pwsh"'],
    ['an env name that is not a shell identifier', { name: 'x', script: 'true', env: ['HostName', 'disk-path'] }, '/body/env/1', '"disk-path" is not a valid shell variable name (letters, digits and _, not starting with a digit)'],
    ['a reserved env name', { name: 'x', script: 'true', env: ['LD_PRELOAD'] }, '/body/env/0', '"LD_PRELOAD" is reserved: it would change how the script process runs'],
    ['PATH', { name: 'x', script: 'true', env: ['PATH'] }, '/body/env/0', '"PATH" is reserved: it would change how the script process runs'],
    ['an env name twice', { name: 'x', script: 'true', env: ['A', 'A'] }, '/body/env', expect.stringMatching(/duplicate/)],
    ['an unknown field', { name: 'x', script: 'true', notes: 'y' }, '/body/notes', 'is not a known field; remove it or check its spelling'],
  ])('refuses %s at the field to fix', async (_case, body, path, message) => {
    const refused = expectProblem(await create(body), 400, 'PITCREW_ERR_VALIDATION');
    expect(refused.errors).toContainEqual({ path, message });
    expect(refused.detail).toMatch(new RegExp(`^${path.replaceAll('/', '\\/')}: `));
  });

  it('checks a save as it checks a new runbook, and takes a script of exactly 256 KiB', async () => {
    const made = (await create({ name: 'limits', script: 'x'.repeat(256 * 1024) })).json();
    expect(made).toMatchObject({ version: 1, sha256: sha256('x'.repeat(256 * 1024)) });
    const refused = expectProblem(await env.api('PUT', `/api/v1/runbooks/${made.id}`, { name: 'limits', script: 'true', env: ['HOME', '9lives'] }), 400, 'PITCREW_ERR_VALIDATION');
    expect(refused.errors).toEqual([{ path: '/body/env/0', message: expect.stringMatching(/^"HOME" is reserved/) }, { path: '/body/env/1', message: expect.stringMatching(/^"9lives" is not a valid shell variable name/) }]);
    expect(refused.detail).toMatch(/\(and 1 more\)$/);
  });

  it("keeps each tenant's runbooks to itself: another tenant's id is a 404, its names its own", async () => {
    const mine = (await create({ name: 'tenant-private', script: V1 })).json();
    await env.api('PUT', `/api/v1/runbooks/${mine.id}`, { name: 'tenant-private', script: V2 });
    const other = await env.addTenant(`runbooks-other-${dialect}`);
    for (const [method, url, body] of [
      ['GET', `/api/v1/runbooks/${mine.id}`],
      ['PUT', `/api/v1/runbooks/${mine.id}`, { name: 'stolen', script: 'true' }],
      ['GET', `/api/v1/runbooks/${mine.id}/versions`],
      ['GET', `/api/v1/runbooks/${mine.id}/versions/1`],
      ['GET', `/api/v1/runbooks/${mine.id}/diff?from=1&to=2`],
      ['DELETE', `/api/v1/runbooks/${mine.id}`],
    ] as const) {
      const refused = expectProblem(await env.api(method, url, body, other.token), 404, 'PITCREW_ERR_NOT_FOUND');
      expect(refused.detail, `${method} ${url}`).toBe(`runbook ${mine.id} does not exist in this tenant`);
    }
    expect((await env.api('GET', '/api/v1/runbooks', undefined, other.token)).json().items).toEqual([]);
    expect((await create({ name: 'tenant-private', script: 'true' }, other.token)).statusCode).toBe(201);
    expect((await env.api('GET', `/api/v1/runbooks/${mine.id}`)).json()).toMatchObject({ version: 2, script: V2 });
  });

  it('deletes a runbook with every version of it, for good', async () => {
    const made = (await create({ name: 'to delete', script: 'true' })).json();
    await env.api('PUT', `/api/v1/runbooks/${made.id}`, { name: 'to delete', script: 'false' });
    const deleted = await env.api('DELETE', `/api/v1/runbooks/${made.id}`);
    expect(deleted.statusCode, deleted.body).toBe(204);
    expectProblem(await env.api('GET', `/api/v1/runbooks/${made.id}`), 404, 'PITCREW_ERR_NOT_FOUND');
    expectProblem(await env.api('GET', `/api/v1/runbooks/${made.id}/versions/1`), 404, 'PITCREW_ERR_NOT_FOUND');
    expectProblem(await env.api('DELETE', `/api/v1/runbooks/${made.id}`), 404, 'PITCREW_ERR_NOT_FOUND');
    expect(await versionRows(made.id)).toEqual([]);
    expect((await create({ name: 'to delete', script: 'true' })).json()).toMatchObject({ version: 1 });
  });

  it('refuses to delete a runbook something uses, naming what (the seam for rules)', async () => {
    const made = (await create({ name: 'in use', script: 'true' })).json();
    const usedBy = async () => [{ id: 'r1', name: 'disk alarm' }];
    await expect(deleteRunbook(env.store.db, env.tenant.tenantId, made.id, usedBy)).rejects.toMatchObject({
      code: 'PITCREW_ERR_CONFLICT', message: 'runbook "in use" is used by rule "disk alarm"; change it to another runbook, or delete it, first',
    });
    expect(await versionRows(made.id)).toHaveLength(1);
  });
});

describe('pitcrew runbooks, through the API', () => {
  let env: TestEnv;
  let dir: string;
  const output: string[] = [];

  beforeAll(async () => {
    env = await startTestEnv('sqlite', { listen: true });
    dir = fs.mkdtempSync(path.join(os.tmpdir(), 'pitcrew-runbooks-cli-'));
  });
  afterAll(async () => {
    await env.close();
    fs.rmSync(dir, { recursive: true, force: true });
  });

  const cli = async (...args: string[]) => {
    output.length = 0;
    const code = await runRunbooks(args, { server: env.listening!.httpUrl, token: env.tenant.token }, (line) => output.push(line));
    return { code, out: output.join('\n') };
  };

  it('creates, updates, shows, diffs, lists versions and deletes', async () => {
    fs.writeFileSync(path.join(dir, 'v1.sh'), V1);
    fs.writeFileSync(path.join(dir, 'v2.sh'), V2);
    fs.writeFileSync(path.join(dir, 'notes.md'), '# Cache cleanup\n');
    const created = await cli('create', '--name', 'cache cleanup', '--file', `@${path.join(dir, 'v1.sh')}`, '--description', `@${path.join(dir, 'notes.md')}`, '--env', 'HostName, Mount');
    expect(created.out).toMatch(/^stored runbook "cache cleanup" \(([0-9a-f-]{36})\) as version 1, sha256 [0-9a-f]{64}$/);
    const id = /\(([0-9a-f-]{36})\)/.exec(created.out)![1]!;

    // What is not given stays as in the latest version.
    expect((await cli('update', id, '--file', `@${path.join(dir, 'v2.sh')}`)).out).toBe(`saved runbook "cache cleanup" as version 2, sha256 ${sha256(V2)}`);
    expect((await cli('update', id, '--file', `@${path.join(dir, 'v2.sh')}`)).out).toBe('runbook "cache cleanup" is unchanged: the same as its version 2, nothing saved');
    expect((await cli('show', id, '--version', '1')).out).toBe(`runbook "cache cleanup", version 1, sh, sha256 ${sha256(V1)}\nexpects: HostName, Mount\n\n# Cache cleanup\n\n${V1.trimEnd()}`);
    expect((await cli('diff', id, '--from', '1', '--to', '2')).out).toBe(`changed from version 1 to 2: script\n${V1_TO_V2.trimEnd()}`);
    expect((await cli('versions', id)).out).toMatch(/^VERSION {2}SAVED {2,}BY {2,}INTERPRETER {2}SHA256 {8}NAME\nv2 {7}.+ {2}sh {11}[0-9a-f]{12} {2}cache cleanup\nv1 /);
    expect((await cli('list')).out).toMatch(new RegExp(`\\n${id} {2,}cache cleanup {2,}v2 {7}sh {11}HostName,Mount {2,}`));
    await expect(cli('update', id)).rejects.toMatchObject({ exitCode: 2, message: expect.stringMatching(/^update needs what to change/) });
    await expect(cli('create', '--name', 'x', '--file', 'v1.sh')).rejects.toMatchObject({ exitCode: 2, message: expect.stringMatching(/--file takes @FILE/) });
    await expect(cli('create', '--name', 'x', '--file', '@/nonexistent/script.sh')).rejects.toMatchObject({ exitCode: 2, message: expect.stringMatching(/^cannot read \/nonexistent\/script\.sh: /) });
    await expect(cli('create', '--name', 'bad', '--file', `@${path.join(dir, 'v1.sh')}`, '--env', 'PATH')).rejects.toMatchObject({ message: expect.stringContaining('/body/env/0: "PATH" is reserved') });
    expect((await cli('delete', id)).out).toBe(`deleted runbook ${id} and every version of it`);
  });
});
