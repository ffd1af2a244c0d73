import { execFileSync, spawn, type ChildProcess } from 'node:child_process';
import { createHash } from 'node:crypto';
import fs from 'node:fs';
import type { AddressInfo } from 'node:net';
import os from 'node:os';
import path from 'node:path';
import tls from 'node:tls';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { runRunbooks } from '../src/cli/runbooks.js';
import { STARTER_DIR, STARTER_RUNBOOKS } from '../src/runbooks/library/catalogue.js';
import { scriptRule, startTestEnv, type TestEnv } from './support/app.js';
import { spawnAgent, waitOnline, type AgentProcess } from './support/agents.js';
import { createTestDatabase, testDialects, type TestDatabase } from './support/databases.js';
import { expectProblem } from './support/problems.js';
import { runCli, startServer, type ServerProcess } from './support/process.js';
import { systemdStandIn, type SystemdStandIn } from './support/systemd-stand-in.js';
import { waitFor } from './support/wait.js';

/*
 * Issue 20's starter library: six runbooks shipped with pitcrew, installed into a tenant's store
 * through the API, then each run by a real agent process from a webhook whose MetaData carries its
 * variables, its effects checked on real things: files, a JVM, a TLS server, a log file, ps.
 *
 * systemd cannot run here (no systemd as PID 1 in a container), so restart-service meets a
 * systemctl and journalctl stand-in (support/systemd-stand-in.ts) that runs each unit as a real
 * process and records every call. The agent gives scripts a fixed PATH (agent/environment.ts),
 * so the stand-ins cannot come first on it from outside: the agent runs in a mount namespace of
 * its own where /usr/local/sbin, the PATH's first directory, holds them. Only that agent sees them.
 */
const SLUGS = STARTER_RUNBOOKS.map((runbook) => runbook.slug);
const starterFile = (name: string) => fs.readFileSync(path.join(import.meta.dirname, '..', STARTER_DIR, name), 'utf8');
const sha256 = (text: string) => createHash('sha256').update(text, 'utf8').digest('hex');

describe.each(testDialects())('the runbook library API on %s', (dialect) => {
  let env: TestEnv;

  beforeAll(async () => {
    env = await startTestEnv(dialect);
  });
  afterAll(() => env.close());

  const install = (slug: string, body?: unknown, token?: string) => env.api('POST', `/api/v1/runbook-library/${slug}/install`, body, token);
  const runbookCount = async () => (await env.api('GET', '/api/v1/runbooks?limit=1000')).json().items.length;

  it('lists the six starter runbooks without their scripts, and gives each whole, byte for byte as shipped', async () => {
    const list = await env.api('GET', '/api/v1/runbook-library');
    expect(list.statusCode, list.body).toBe(200);
    const items = list.json().items;
    expect(items.map((item: { slug: string }) => item.slug)).toEqual(['disk-cleanup', 'restart-service', 'jvm-thread-dump', 'top-memory', 'log-tail', 'cert-expiry']);
    for (const item of items) {
      const script = starterFile(`${item.slug}.sh`);
      const catalogued = STARTER_RUNBOOKS.find((runbook) => runbook.slug === item.slug)!;
      expect(item).toEqual({ ...catalogued, description: starterFile(`${item.slug}.md`), sha256: sha256(script) });
      const whole = await env.api('GET', `/api/v1/runbook-library/${item.slug}`);
      expect(whole.json()).toEqual({ ...item, script });
    }
  });

  it('installs a starter runbook as version 1 of a runbook of the tenant, under its name or another', async () => {
    const entry = (await env.api('GET', '/api/v1/runbook-library/log-tail')).json();
    const installed = await install('log-tail', {});
    expect(installed.statusCode, installed.body).toBe(201);
    const body = installed.json();
    expect(installed.headers.location).toBe(`/api/v1/runbooks/${body.id}`);
    expect(body).toMatchObject({ version: 1, versionCreated: true, name: 'log tail', description: entry.description, interpreter: 'sh', script: entry.script, env: entry.env, sha256: entry.sha256 });
    const { versionCreated: _, ...stored } = body;
    expect((await env.api('GET', `/api/v1/runbooks/${body.id}`)).json()).toEqual(stored);

    // No body at all installs under the library name, as {} does; `name` chooses another.
    const bare = await env.app.server.inject({ method: 'POST', url: '/api/v1/runbook-library/top-memory/install', headers: { authorization: `Bearer ${env.tenant.token}` } });
    expect(bare.statusCode, bare.body).toBe(201);
    expect(bare.json()).toMatchObject({ name: 'top memory processes', version: 1 });
    expect((await install('log-tail', { name: '  nginx error log ' })).json()).toMatchObject({ name: 'nginx error log', version: 1, sha256: entry.sha256 });
  });

  it('answers a taken name with a 409 that says what holds it and how to install another copy, and saves nothing', async () => {
    const first = (await install('cert-expiry', {})).json();
    const before = await runbookCount();
    const again = expectProblem(await install('cert-expiry', {}), 409, 'PITCREW_ERR_CONFLICT');
    expect(again).toMatchObject({
      detail: `"cert-expiry" is already installed as runbook ${first.id} ("certificate expiry", version 1, the same script); to install another copy, give it another name: {"name": "certificate expiry (2)"}`,
      errors: [{ path: '/body/name', message: `already the name of runbook ${first.id}; choose another` }],
    });
    const mine = (await env.api('POST', '/api/v1/runbooks', { name: 'restart web', script: 'systemctl restart nginx' })).json();
    const taken = expectProblem(await install('restart-service', { name: 'restart web' }), 409, 'PITCREW_ERR_CONFLICT');
    expect(taken.detail).toBe(`runbook ${mine.id} is already named "restart web" in this tenant; to install another copy, give it another name: {"name": "restart web (2)"}`);
    expect(await runbookCount()).toBe(before + 1);
    expect((await install('cert-expiry', { name: 'certificate expiry (2)' })).statusCode).toBe(201);
  });

  it('answers an unknown slug with a 404 that lists the library', async () => {
    for (const [method, url] of [['GET', '/api/v1/runbook-library/disk-clean'], ['POST', '/api/v1/runbook-library/Disk-Cleanup/install']] as const) {
      const missing = expectProblem(await env.api(method, url, method === 'POST' ? {} : undefined), 404, 'PITCREW_ERR_NOT_FOUND');
      const slug = url.split('/')[4];
      expect(missing).toMatchObject({
        detail: `the runbook library has no "${slug}"; it has: ${SLUGS.join(', ')}`,
        errors: [{ path: '/params/slug', message: `not in the library; one of: ${SLUGS.join(', ')}` }],
      });
    }
  });

  it.each([
    ['a blank name', { name: '   ' }, '/body/name', 'holds only blanks; give the runbook a name to find it by'],
    ['a name over 200 characters', { name: 'x'.repeat(201) }, '/body/name', 'must NOT have more than 200 characters'],
    ['an unknown field', { name: 'x', script: 'rm -rf /' }, '/body/script', 'is not a known field; remove it or check its spelling'],
  ])('refuses %s at the field to fix', async (_case, body, fieldPath, message) => {
    const before = await runbookCount();
    expect(expectProblem(await install('disk-cleanup', body), 400, 'PITCREW_ERR_VALIDATION').errors).toContainEqual({ path: fieldPath, message });
    expect(await runbookCount()).toBe(before);
  });

  it('needs a token, and installs into the caller’s tenant only', async () => {
    for (const url of ['/api/v1/runbook-library', '/api/v1/runbook-library/disk-cleanup']) {
      expectProblem(await env.app.server.inject({ method: 'GET', url }), 401, 'PITCREW_ERR_UNAUTHENTICATED');
    }
    const other = await env.addTenant(`library-other-${dialect}`);
    const theirs = (await install('jvm-thread-dump', {}, other.token)).json();
    expect(theirs).toMatchObject({ name: 'JVM thread dump', version: 1 });
    expectProblem(await env.api('GET', `/api/v1/runbooks/${theirs.id}`), 404, 'PITCREW_ERR_NOT_FOUND');
    // The name is the other tenant's; this one still installs under it.
    expect((await install('jvm-thread-dump', {})).statusCode).toBe(201);
  });
});

describe('pitcrew runbooks library and install, through the API', () => {
  let env: TestEnv;
  const output: string[] = [];

  beforeAll(async () => {
    env = await startTestEnv('sqlite', { listen: true });
  });
  afterAll(() => env.close());

  const cli = async (...args: string[]) => {
    output.length = 0;
    const code = await runRunbooks(args, { server: env.listening!.httpUrl, token: env.tenant.token }, (line) => output.push(line));
    return { code, out: output.join('\n') };
  };

  it('lists the library, shows one, installs one, and says what to do when the name is taken', async () => {
    const list = await cli('library');
    expect(list.out.split('\n')[0]).toMatch(/^SLUG {2,}NAME {2,}INTERPRETER {2}ENV$/);
    expect(list.out).toMatch(/\ndisk-cleanup {2,}disk cleanup {2,}sh {11}CleanupPaths,CleanupPatterns,OlderThanDays,DryRun,MaxDeleteFiles\n/);
    expect(list.out.split('\n')).toHaveLength(7);
    const shown = await cli('library', 'log-tail');
    expect(shown.out).toBe(`library runbook log-tail: "log tail", sh, sha256 ${sha256(starterFile('log-tail.sh'))}\nreads: LogFile, LogLines, LogPattern, LogRoots\n\n${starterFile('log-tail.md').trimEnd()}\n\n${starterFile('log-tail.sh').trimEnd()}`);

    const installed = await cli('install', 'log-tail', '--name', 'app log');
    expect(installed.out).toMatch(/^installed "log-tail" as runbook "app log" \(([0-9a-f-]{36})\), version 1, sha256 [0-9a-f]{64}$/);
    const id = /\(([0-9a-f-]{36})\)/.exec(installed.out)![1]!;
    expect((await env.api('GET', `/api/v1/runbooks/${id}`)).json()).toMatchObject({ name: 'app log', script: starterFile('log-tail.sh') });
    expect((await cli('install', 'top-memory')).out).toMatch(/^installed "top-memory" as runbook "top memory processes" /);
    await expect(cli('install', 'log-tail', '--name', 'app log')).rejects.toMatchObject({ message: expect.stringContaining('to install another copy, give it another name: {"name": "app log (2)"}') });
    await expect(cli('install')).rejects.toMatchObject({ exitCode: 2, message: expect.stringMatching(/^install needs the library runbook's slug/) });
    await expect(cli('install', 'nope')).rejects.toMatchObject({ message: expect.stringContaining(`the runbook library has no "nope"; it has: ${SLUGS.join(', ')}`) });
  });
});

describe('the built server', () => {
  let database: TestDatabase;
  let server: ServerProcess;

  beforeAll(async () => {
    database = await createTestDatabase('sqlite');
  });
  afterAll(async () => {
    await server?.stop();
    await database.drop();
  });

  it('serves the starter library from a built tree (npm run build, then pitcrew server)', async () => {
    const { token } = JSON.parse((await runCli(['bootstrap', '--json'], database.env)).stdout);
    server = await startServer(database.env);
    const response = await fetch(`${server.url}/api/v1/runbook-library/disk-cleanup`, { headers: { authorization: `Bearer ${token}` } });
    expect(response.status).toBe(200);
    expect(await response.json()).toMatchObject({ slug: 'disk-cleanup', script: starterFile('disk-cleanup.sh'), description: starterFile('disk-cleanup.md') });
  });
});

interface Execution {
  id: string;
  state: string;
  exitCode: number | null;
  stdout: string;
  stderr: string;
  reason: string | null;
  artifacts?: Array<{ id: string; name: string; size: number }>;
  runbook: { runbookId?: string; version?: number; name?: string; sha256?: string } | null;
}

const HOST = 'library-host';
const TERMINAL = ['succeeded', 'failed', 'timed_out', 'cancelled', 'lost', 'expired'];

describe('the starter runbooks, each run by a real agent', () => {
  let env: TestEnv;
  let agent: AgentProcess;
  let systemd: SystemdStandIn;
  let dir: string;
  const triggers = new Map<string, string>();

  beforeAll(async () => {
    env = await startTestEnv('sqlite', { listen: true });
    systemd = systemdStandIn();
    dir = fs.mkdtempSync(path.join(os.tmpdir(), 'pitcrew-library-'));
    const { httpsUrl, fingerprint } = env.listening!;
    agent = spawnAgent({ server: httpsUrl, apiKey: env.tenant.apiKey, hostname: HOST, fingerprint, launcher: systemd.launcher });
    await waitOnline(env.api, HOST);
    // Each runbook installed from the library; its rules run the installed runbook by reference.
    for (const slug of SLUGS) {
      const installed = await env.api('POST', `/api/v1/runbook-library/${slug}/install`, {});
      expect(installed.statusCode, installed.body).toBe(201);
      for (const flavour of ['autofix', 'diagnostics']) {
        const rule = await env.api('POST', '/api/v1/rules', scriptRule({ name: `${slug} ${flavour}`, action: { type: 'script', flavour, runbook: { runbookId: installed.json().id }, timeoutSeconds: 120 } }));
        expect(rule.statusCode, rule.body).toBe(201);
        triggers.set(`${slug} ${flavour}`, rule.json().trigger.triggerId);
      }
    }
  }, 60_000);
  afterAll(async () => {
    await agent?.stop();
    await env.close();
    systemd?.close();
    fs.rmSync(dir, { recursive: true, force: true });
  });

  const execution = async (id: string): Promise<Execution> => (await env.api('GET', `/api/v1/executions/${id}`)).json();

  /** Fires the runbook's rule with `variables` in the alert's MetaData; the execution's id. */
  async function fire(slug: string, variables: Record<string, string | number | boolean>, flavour = 'autofix'): Promise<string> {
    const reply = await env.webhook(triggers.get(`${slug} ${flavour}`)!, { HostName: HOST, AlarmName: `${slug} test`, MetaData: variables });
    expect(reply.statusCode, reply.body).toBe(202);
    expect(reply.json()).toMatchObject({ outcome: 'accepted', skippedEnv: [] });
    return reply.json().executionIds[0];
  }

  async function ended(id: string, timeoutMs = 60_000): Promise<Execution> {
    return waitFor(async () => {
      const found = await execution(id);
      return TERMINAL.includes(found.state) ? found : undefined;
    }, `execution ${id} to end`, timeoutMs);
  }

  const run = async (slug: string, variables: Record<string, string | number | boolean>, flavour = 'autofix') => ended(await fire(slug, variables, flavour));

  /** The run succeeded: exit 0. */
  function succeeded(e: Execution): Execution {
    expect({ state: e.state, exitCode: e.exitCode }, `${e.stdout}\n--- stderr\n${e.stderr}`).toEqual({ state: 'succeeded', exitCode: 0 });
    return e;
  }

  /** The run failed with this exit code (the script's own, with its reason on stderr). */
  function failedWith(e: Execution, exitCode: number): Execution {
    expect({ state: e.state, exitCode: e.exitCode }, `${e.stdout}\n--- stderr\n${e.stderr}`).toEqual({ state: 'failed', exitCode });
    return e;
  }

  describe('disk cleanup', () => {
    const DAY = 86_400_000;
    let root: string;
    let outside: string;

    /** A file of `bytes` bytes last modified `days` days ago. */
    function file(at: string, bytes: number, days: number): string {
      fs.mkdirSync(path.dirname(at), { recursive: true });
      fs.writeFileSync(at, 'x'.repeat(bytes));
      const when = new Date(Date.now() - days * DAY);
      fs.utimesSync(at, when, when);
      return at;
    }

    beforeAll(() => {
      root = path.join(dir, 'cleanup');
      outside = path.join(dir, 'outside');
    });

    function layout() {
      fs.rmSync(root, { recursive: true, force: true });
      fs.rmSync(outside, { recursive: true, force: true });
      const target = file(path.join(outside, 'precious.gz'), 10, 30);
      fs.mkdirSync(root, { recursive: true });
      fs.symlinkSync(target, path.join(root, 'link-to-outside.gz'));
      return {
        deleted: [file(path.join(root, 'app.log.1'), 1000, 10), file(path.join(root, 'old.gz'), 2000, 8), file(path.join(root, 'nested/deep/cache.tmp'), 48, 30)],
        kept: [file(path.join(root, 'recent.gz'), 100, 3), file(path.join(root, 'app.log'), 100, 30), file(path.join(root, 'notes.txt'), 100, 30), target],
      };
    }
    const exists = (files: string[]) => files.filter((f) => fs.existsSync(f));

    it('is a dry run by default: lists the old matching files and deletes nothing', async () => {
      const { deleted, kept } = layout();
      const e = succeeded(await run('disk-cleanup', { CleanupPaths: root }));
      expect(e.stdout).toContain(`files older than 7 days named *.gz *.log.[0-9]* *.tmp under ${root}`);
      expect(e.stdout).toContain('found 3 files, 3.0 KiB');
      for (const f of deleted) expect(e.stdout).toContain(`  would delete ${f}\n`);
      expect(e.stdout).toContain('dry run: nothing deleted; set DryRun=false to delete these files');
      expect(exists([...deleted, ...kept])).toEqual([...deleted, ...kept]);
    });

    it('with DryRun=false deletes only old matching files under the roots, and reports bytes and df', async () => {
      const { deleted, kept } = layout();
      // A root inside another on its filesystem is swept once, by the other.
      const e = succeeded(await run('disk-cleanup', { CleanupPaths: `${root}/nested, ${root}, ${root}`, DryRun: false, OlderThanDays: 7 }));
      expect(e.stdout).toContain(`named *.gz *.log.[0-9]* *.tmp under ${root}\n`);
      expect(e.stdout).toContain('found 3 files, 3.0 KiB\n');
      expect(e.stdout).toMatch(/disk usage before:\n {2}\/\S* \(.+\): \d+% used, [\d.]+ GiB available\n/);
      expect(e.stdout).toContain('deleted 3 files, 3.0 KiB');
      expect(e.stdout).toMatch(/disk usage after:\n {2}\/\S* \(.+\): \d+% used/);
      expect(exists(deleted)).toEqual([]);
      // Recent, not matching, outside the root, or reached through a link: kept.
      expect(exists(kept)).toEqual(kept);
      expect(fs.lstatSync(path.join(root, 'link-to-outside.gz')).isSymbolicLink()).toBe(true);
    });

    it('deletes nothing when more files match than MaxDeleteFiles', async () => {
      const { deleted, kept } = layout();
      const e = failedWith(await run('disk-cleanup', { CleanupPaths: root, DryRun: 'false', MaxDeleteFiles: 2 }), 3);
      expect(e.stderr).toContain('refused: 3 files is more than MaxDeleteFiles=2, so nothing was deleted; check the patterns, or raise MaxDeleteFiles');
      expect(exists([...deleted, ...kept])).toEqual([...deleted, ...kept]);
    });

    it.each([
      ['/ as a root', { CleanupPaths: '/' }, '"/" in CleanupPaths is (or is inside) a system directory (/)'],
      ['a system directory', { CleanupPaths: '/etc/ssl' }, '"/etc/ssl" in CleanupPaths is (or is inside) a system directory (/etc/ssl)'],
      ['a relative path', { CleanupPaths: 'var/log' }, '"var/log" in CleanupPaths is not an absolute path'],
      ['no paths', { CleanupPaths: ' , ' }, 'CleanupPaths is not set'],
      ['a pattern with a /', { CleanupPatterns: '../*.gz' }, 'pattern "../*.gz" in CleanupPatterns holds a /: patterns match file names, not paths'],
      ['a bad number of days', { OlderThanDays: '7; rm -rf /' }, 'OlderThanDays="7; rm -rf /" is not a whole number (from 1 to 36500)'],
      ['a bad DryRun', { DryRun: 'nope' }, 'DryRun="nope" must be true or false'],
    ])('refuses %s and deletes nothing', async (_case, variables, reason) => {
      const { deleted, kept } = layout();
      const e = failedWith(await run('disk-cleanup', { CleanupPaths: root, DryRun: false, ...variables }), 2);
      expect(e.stderr).toMatch(new RegExp(`^refused: ${reason.replace(/[.*+?^${}()|[\]\\/]/g, '\\$&')}.*; nothing was deleted\n$`));
      expect(exists([...deleted, ...kept])).toEqual([...deleted, ...kept]);
    });

    it('refuses a root that leads into a system directory through a symbolic link', async () => {
      const link = path.join(dir, 'sneaky');
      fs.rmSync(link, { force: true });
      fs.symlinkSync('/usr/share', link);
      const e = failedWith(await run('disk-cleanup', { CleanupPaths: link, DryRun: false, CleanupPatterns: '*' }), 2);
      expect(e.stderr).toContain(`"${link}" in CleanupPaths is (or is inside) a system directory (/usr/share)`);
    });
  });

  describe('restart a systemd service', () => {
    beforeAll(() => {
      systemd.addUnit('shop.service', 'echo "shop: listening on :8080"\ntouch "$READY"\nexec sleep 600\n');
      systemd.addUnit('broken.service', 'echo "shop: bind: address already in use" >&2\nexit 1\n');
    });
    const restarts = (unit: string) => systemd.calls().filter((call) => call === `systemctl restart ${unit}`).length;

    it('restarts the unit, waits until it is active and stays so; a real process runs it', async () => {
      const first = succeeded(await run('restart-service', { ServiceName: 'shop', SettleSeconds: 1 }));
      const pid = systemd.mainPid('shop.service');
      expect(pid).toBeGreaterThan(0);
      expect(first.stdout).toContain(`restarting shop.service on ${os.hostname()} (it was inactive, main pid 0)`);
      expect(first.stdout).toContain(`OK: shop.service restarted and active, main pid ${pid}\n`);

      const second = succeeded(await run('restart-service', { ServiceName: 'shop.service', SettleSeconds: 1 }));
      const next = systemd.mainPid('shop.service');
      expect(second.stdout).toContain(`(it was active, main pid ${pid})`);
      expect(second.stdout).toContain(`OK: shop.service restarted and active, main pid ${next}\n`);
      expect(next).not.toBe(pid);
      expect(fs.existsSync(`/proc/${pid}/cmdline`) && fs.readFileSync(`/proc/${pid}/stat`, 'utf8').split(' ')[2] !== 'Z').toBe(false);
      expect(restarts('shop.service')).toBe(2);
    });

    it('fails when the unit does not start, showing its status and journal', async () => {
      const e = failedWith(await run('restart-service', { ServiceName: 'broken' }), 1);
      expect(e.stderr).toContain('Job for broken.service failed because the control process exited with error code.');
      expect(e.stderr).toContain('FAILED: systemctl restart broken.service failed');
      expect(e.stdout).toContain('--- systemctl status broken.service\n● broken.service - stand-in unit\n     Active: failed\n');
      expect(e.stdout).toContain('--- journalctl -u broken.service (last 50 lines)\nshop: bind: address already in use\n');
      expect(systemd.calls()).toContain('journalctl --unit=broken.service --lines=50 --no-pager');
    });

    it('fails when the unit stops being active while it settles', async () => {
      const crash = path.join(dir, 'flaky-crash');
      systemd.addUnit('flaky.service', `touch "$READY"\nwhile [ ! -f '${crash}' ]; do sleep 0.05; done\necho "flaky: out of memory" >&2\nexit 137\n`);
      const id = await fire('restart-service', { ServiceName: 'flaky', SettleSeconds: 8 });
      // The unit crashes once the runbook says it is watching it settle: the output, live.
      await liveOutput(id, 'checking that it stays active for 8 s');
      fs.writeFileSync(crash, '');
      const e = failedWith(await ended(id), 1);
      expect(e.stderr).toContain('FAILED: flaky.service stopped being active within 8 s of the restart (it is failed): it crashes after starting');
      expect(e.stdout).toContain('flaky: out of memory');
    });

    it.each([
      ['a name with shell characters', 'shop; reboot', 'ServiceName="shop; reboot" is not a systemd unit name (letters, digits and : - _ . @, not starting with -)'],
      ['an option', '--force', 'ServiceName="--force" is not a systemd unit name (letters, digits and : - _ . @, not starting with -)'],
      ['a unit that is not a service', 'shop.socket', 'ServiceName="shop.socket" is not a service: this runbook restarts .service units only'],
      ['no name', '', 'ServiceName is not set: the service to restart, e.g. nginx or php8.2-fpm.service'],
    ])('refuses %s and restarts nothing', async (_case, name, reason) => {
      const calls = systemd.calls().length;
      const e = failedWith(await run('restart-service', { ServiceName: name }), 2);
      expect(e.stderr).toBe(`refused: ${reason}; nothing was restarted\n`);
      expect(systemd.calls()).toHaveLength(calls);
    });
  });

  describe('JVM thread dump', () => {
    let jvm: ChildProcess;

    beforeAll(async () => {
      const source = path.join(dir, 'PitcrewSleepyApp.java');
      fs.writeFileSync(source, [
        'public class PitcrewSleepyApp {',
        '  public static void main(String[] args) throws Exception {',
        '    Thread sleeper = new Thread(() -> { try { Thread.sleep(600_000); } catch (InterruptedException e) { } }, "pitcrew-sleeper");',
        '    sleeper.start();',
        '    System.out.println("ready");',
        '    sleeper.join();',
        '  }',
        '}',
      ].join('\n'));
      jvm = spawn('java', [source], { cwd: dir, stdio: ['ignore', 'pipe', 'inherit'] });
      let said = '';
      jvm.stdout!.on('data', (chunk) => (said += chunk));
      await waitFor(() => said.includes('ready'), 'the JVM to start its sleeper thread', 30_000);
    }, 40_000);
    afterAll(() => {
      jvm?.kill('SIGKILL');
    });

    it('finds the JVM by its main class and saves each dump as an artifact of a diagnostics run', async () => {
      const e = succeeded(await run('jvm-thread-dump', { JavaProcess: 'PitcrewSleepyApp', DumpCount: 2, DumpIntervalSeconds: 1 }, 'diagnostics'));
      expect(e.stdout).toContain(`JVM pid ${jvm.pid} on ${os.hostname()}: java ${path.join(dir, 'PitcrewSleepyApp.java')}\n`);
      expect(e.stdout).toContain('taking 2 thread dumps, 1 s apart, with jcmd\n');
      expect(e.stdout).toMatch(/dump 1 of 2 at \S+Z: \d+ threads \(RUNNABLE \d+, TIMED_WAITING \d+, WAITING \d+\)\n/);
      expect(e.stdout).toContain(`OK: 2 of 2 thread dumps of pid ${jvm.pid} taken`);
      expect(e.artifacts!.map((a) => a.name)).toEqual([`thread-dump-${jvm.pid}-1.txt`, `thread-dump-${jvm.pid}-2.txt`]);
      const dump = await env.api('GET', `/api/v1/executions/${e.id}/artifacts/${e.artifacts![1]!.id}`);
      expect(dump.body).toMatch(/^"pitcrew-sleeper" #\d+ .*\n {3}java.lang.Thread.State: TIMED_WAITING \(sleeping\)\n/m);
    });

    it('dumps the JVM of JavaPid into the output of an autofix run', async () => {
      const e = succeeded(await run('jvm-thread-dump', { JavaPid: jvm.pid!, DumpCount: 1 }));
      expect(e.stdout).toContain(`----- thread dump 1 of 1, pid ${jvm.pid}, `);
      expect(e.stdout).toMatch(/^"pitcrew-sleeper" #\d+ /m);
      expect(e.stdout).toContain('Full thread dump OpenJDK');
    });

    it.each([
      ['a main class no JVM runs', { JavaProcess: 'NoSuchApp' }, (pid: number) => `no java process on ${os.hostname()} has "NoSuchApp" (JavaProcess) in its command line; the java processes are:\n${pid} java `],
      ['a pid that is not a JVM', { JavaPid: 1 }, () => 'pid 1 (JavaPid) is '],
      ['neither', {}, () => 'set JavaPid (a process id) or JavaProcess'],
      ['too many dumps', { JavaProcess: 'PitcrewSleepyApp', DumpCount: 50 }, () => 'DumpCount=50 is out of range: from 1 to 20'],
    ])('refuses %s', async (_case, variables, reason) => {
      const e = failedWith(await run('jvm-thread-dump', variables), 2);
      expect(e.stderr).toContain(`refused: ${reason(jvm.pid!)}`);
    });
  });

  describe('top memory processes', () => {
    let hog: ChildProcess;

    beforeAll(async () => {
      // 160 MiB resident, and a secret on its command line that the output must not show by default.
      hog = spawn(process.execPath, ['-e', 'globalThis.b = Buffer.alloc(160 * 1024 * 1024, 1); console.log("held"); setInterval(() => {}, 60_000)', '--', '--db-password=hunter2'], { stdio: ['ignore', 'pipe', 'inherit'] });
      let said = '';
      hog.stdout!.on('data', (chunk) => (said += chunk));
      await waitFor(() => said.includes('held'), 'the memory hog to hold its memory');
    });
    afterAll(() => {
      hog?.kill('SIGKILL');
    });

    it('lists the processes holding the most memory, with the hog among them, and the host’s memory', async () => {
      const e = succeeded(await run('top-memory', { TopCount: 100 }));
      expect(e.stdout).toMatch(/^Mem: +\d+/m);
      expect(e.stdout).toContain('top 100 processes by resident memory (RSS):\n   RSS MiB   %MEM      PID USER         COMMAND\n');
      // Its name as ps and top show it: Node 24 names its main thread, so its own, `MainThread`.
      const name = fs.readFileSync(`/proc/${hog.pid}/comm`, 'utf8').trim();
      expect(name).toBe(Number(process.versions.node.split('.')[0]) >= 24 ? 'MainThread' : 'node');
      const line = new RegExp(`^ +([\\d.]+) +[\\d.]+ +${hog.pid} root +${name}$`, 'm').exec(e.stdout);
      expect(line, e.stdout).not.toBeNull();
      expect(Number(line![1])).toBeGreaterThanOrEqual(160);
      // Sorted by RSS, largest first.
      const rss = [...e.stdout.split('top 100 commands')[0]!.matchAll(/^ +([\d.]+) +[\d.]+ +\d+ /gm)].map((m) => Number(m[1]));
      expect(rss).toEqual([...rss].sort((a, b) => b - a));
      expect(e.stdout).toMatch(/\n\d+ processes hold [\d.]+ MiB resident of [\d.]+ MiB/);
      expect(e.stdout).not.toContain('hunter2');
    });

    it('shows command lines only when asked', async () => {
      const e = succeeded(await run('top-memory', { TopCount: 100, ShowCommandLines: true }));
      expect(e.stdout).toMatch(new RegExp(`^ +[\\d.]+ +[\\d.]+ +${hog.pid} root +\\S*node -e .*--db-password=hunter2$`, 'm'));
    });

    it('refuses a count out of range', async () => {
      expect(failedWith(await run('top-memory', { TopCount: 0 }), 2).stderr).toBe('refused: TopCount=0 is out of range: from 1 to 100\n');
    });
  });

  describe('log tail', () => {
    let logs: string;
    let log: string;

    beforeAll(() => {
      logs = path.join(dir, 'logs');
      log = path.join(logs, 'app', 'app.log');
      fs.mkdirSync(path.dirname(log), { recursive: true });
      fs.writeFileSync(log, Array.from({ length: 500 }, (_, i) => (i % 100 === 7 ? `${i} ERROR payment declined` : `${i} INFO ok`)).join('\n') + '\n');
      fs.symlinkSync('/etc/passwd', path.join(logs, 'app', 'passwd.log'));
      fs.symlinkSync(log, path.join(logs, 'current.log'));
    });

    it('prints the last lines of a log under the allowed roots', async () => {
      const e = succeeded(await run('log-tail', { LogFile: log, LogLines: 3, LogRoots: `/nonexistent,${logs}` }));
      expect(e.stdout).toMatch(new RegExp(`^== ${log} on ${os.hostname()}: ${fs.statSync(log).size} bytes, last modified \\S+Z\n== its last 3 lines:\n497 INFO ok\n498 INFO ok\n499 INFO ok\n$`));
      // The execution ran the installed copy, version 1, whose bytes are the shipped file's (the agent checked).
      expect(e.runbook).toMatchObject({ version: 1, name: 'log tail', sha256: sha256(starterFile('log-tail.sh')) });
    });

    it('prints only the last matching lines with a pattern, through a link inside the roots', async () => {
      const e = succeeded(await run('log-tail', { LogFile: path.join(logs, 'current.log'), LogPattern: 'ERROR|FATAL', LogLines: 2, LogRoots: logs }));
      expect(e.stdout).toContain(`== ${log} on `);
      expect(e.stdout.endsWith('== its last 2 lines matching /ERROR|FATAL/ (extended regular expression):\n307 ERROR payment declined\n407 ERROR payment declined\n')).toBe(true);
      const none = succeeded(await run('log-tail', { LogFile: log, LogPattern: 'panic', LogRoots: logs }));
      expect(none.stdout).toMatch(/\(no line matches\)\n$/);
    });

    /** /etc/passwd by `..` from inside the roots: one `..` per directory of the temporary one's path, wherever $TMPDIR is. */
    const climbOut = () => `${logs}/app/${'../'.repeat(path.join(logs, 'app').split('/').length - 1)}etc/passwd`;

    it.each([
      ['a link out of the roots', () => ({ LogFile: path.join(logs, 'app', 'passwd.log'), LogRoots: logs }), () => `LogFile="${path.join(logs, 'app', 'passwd.log')}" (/etc/passwd) is not under the allowed directories LogRoots=${logs}`],
      ['.. out of the roots', () => ({ LogFile: climbOut(), LogRoots: logs }), () => `LogFile="${climbOut()}" (/etc/passwd) is not under the allowed directories LogRoots=${logs}`],
      ['a file outside the default root /var/log', () => ({ LogFile: log }), () => `LogFile="${log}" (${log}) is not under the allowed directories LogRoots=/var/log`],
      ['/ as a root', () => ({ LogFile: '/etc/passwd', LogRoots: '/' }), () => 'LogRoots may not hold / (it would allow every file); name the directories that hold logs'],
      ['a bad pattern', () => ({ LogFile: log, LogRoots: logs, LogPattern: '(' }), () => 'LogPattern="(" is not a valid extended regular expression: grep: Unmatched ( or \\('],
      ['a relative path', () => ({ LogFile: 'app.log' }), () => 'LogFile="app.log" is not an absolute path'],
    ])('refuses %s and prints nothing of the file', async (_case, variables, reason) => {
      const e = failedWith(await run('log-tail', variables()), 2);
      expect(e.stderr).toBe(`refused: ${reason()}\n`);
      expect(e.stdout).toBe('');
    });
  });

  describe('certificate expiry', () => {
    let server: tls.Server;
    let endpoint: string;
    let soon: string;
    let chain: string;

    // Made this second for 10 days: 9 days 23 h left, or 10 days 0 h while still in that second.
    const TEN_DAYS = '(9 days 23|10 days 0)';

    /** A self-signed certificate valid for `days` days, made by openssl: [certificate, key] files. */
    function certificate(name: string, days: number): [string, string] {
      const [cert, key] = [path.join(dir, `${name}.crt`), path.join(dir, `${name}.key`)];
      execFileSync('openssl', ['req', '-x509', '-newkey', 'ec', '-pkeyopt', 'ec_paramgen_curve:prime256v1', '-nodes', '-keyout', key, '-out', cert, '-days', String(days), '-subj', `/CN=${name}`], { stdio: 'ignore' });
      return [cert, key];
    }

    beforeAll(async () => {
      const [cert, key] = certificate('soon.pitcrew.test', 10);
      soon = cert;
      chain = path.join(dir, 'chain.pem');
      fs.writeFileSync(chain, fs.readFileSync(cert, 'utf8') + fs.readFileSync(certificate('later.pitcrew.test', 400)[0], 'utf8'));
      server = tls.createServer({ cert: fs.readFileSync(cert), key: fs.readFileSync(key) }, (socket) => socket.end());
      await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
      endpoint = `127.0.0.1:${(server.address() as AddressInfo).port}`;
    });
    afterAll(() => new Promise<void>((resolve) => server.close(() => resolve())));

    it('fails for a TLS server whose certificate expires within CertWarnDays, and passes under a lower threshold', async () => {
      const warned = failedWith(await run('cert-expiry', { CertEndpoints: endpoint, CertWarnDays: 14 }), 1);
      expect(warned.stdout).toMatch(new RegExp(`\nEXPIRING {4}${endpoint}: CN ?= ?soon.pitcrew.test, expires \\w{3} [ \\d]\\d \\d\\d:\\d\\d:\\d\\d \\d{4} GMT, in ${TEN_DAYS} h \\(under CertWarnDays=14\\)\n`));
      expect(warned.stdout).toContain('1 certificates checked: 1 expiring or expired, 0 not checked');
      const fine = succeeded(await run('cert-expiry', { CertEndpoints: endpoint, CertWarnDays: 7 }));
      expect(fine.stdout).toMatch(new RegExp(`\nOK {10}${endpoint}: CN ?= ?soon.pitcrew.test, expires .* GMT, in ${TEN_DAYS} h\n`));
    });

    it('reads every certificate of a PEM file', async () => {
      const e = failedWith(await run('cert-expiry', { CertFiles: `${chain},${soon}`, CertWarnDays: 30 }), 1);
      expect(e.stdout).toMatch(new RegExp(`\nEXPIRING {4}${chain}: CN ?= ?soon.pitcrew.test, .* in ${TEN_DAYS} h \\(under CertWarnDays=30\\)\nOK {10}${chain}, chain certificate 2: CN ?= ?later.pitcrew.test, .* in (399 days 23|400 days 0) h\nEXPIRING {4}${soon}: `));
      expect(e.stdout).toContain('3 certificates checked: 2 expiring or expired, 0 not checked');
    });

    it('fails with exit 3 when an endpoint gives no certificate', async () => {
      const closed = await new Promise<number>((resolve) => {
        const probe = tls.createServer().listen(0, '127.0.0.1', () => {
          const { port } = probe.address() as AddressInfo;
          probe.close(() => resolve(port));
        });
      });
      const e = failedWith(await run('cert-expiry', { CertEndpoints: `127.0.0.1:${closed}`, CertFiles: path.join(dir, 'soon.pitcrew.test.key') }), 3);
      expect(e.stdout).toContain(`UNCHECKED   127.0.0.1:${closed}: no certificate received: `);
      expect(e.stdout).toContain(`UNCHECKED   ${path.join(dir, 'soon.pitcrew.test.key')}: no certificate found`);
    });

    it.each([
      ['an endpoint with shell characters', { CertEndpoints: 'shop.example.com;reboot:443' }, '"shop.example.com;reboot:443" in CertEndpoints is not host:port'],
      ['an endpoint without a port', { CertEndpoints: 'shop.example.com' }, '"shop.example.com" in CertEndpoints has no port: write host:port, e.g. shop.example.com:443'],
      ['a port out of range', { CertEndpoints: 'shop.example.com:99999' }, 'the port of "shop.example.com:99999" in CertEndpoints is not from 1 to 65535'],
      ['nothing to check', {}, 'set CertEndpoints (host:port, separated by commas) or CertFiles (PEM files), or both'],
    ])('refuses %s', async (_case, variables, reason) => {
      expect(failedWith(await run('cert-expiry', variables), 2).stderr).toBe(`refused: ${reason}\n`);
    });
  });

  /** Waits until the running execution's live output (its Server-Sent Events stream) holds `text`. */
  async function liveOutput(id: string, text: string): Promise<void> {
    const response = await fetch(`${env.listening!.httpUrl}/api/v1/executions/${id}/stream`, { headers: { authorization: `Bearer ${env.tenant.token}` } });
    const reader = response.body!.getReader();
    const decoder = new TextDecoder();
    let received = '';
    let seen = '';
    try {
      while (!seen.includes(text)) {
        const { done, value } = await reader.read();
        if (done) throw new Error(`the stream ended before the output held "${text}": ${seen}`);
        received += decoder.decode(value, { stream: true });
        // Events end with a blank line; a read may end inside one, which waits for the next read.
        const events = received.split('\n\n');
        received = events.pop()!;
        for (const event of events) {
          const data = /^data: (.*)$/m.exec(event)?.[1];
          if (event.includes('event: output') && data) seen += (JSON.parse(data) as { chunk: string }).chunk;
        }
      }
    } finally {
      await reader.cancel();
    }
  }
});
