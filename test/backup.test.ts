import fs from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import SqliteDatabase from 'better-sqlite3';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { keyFingerprint, readSecretKeyFile } from '../src/identity/secret-box.js';
import { signature, SIGNATURE_HEADER, TIMESTAMP_HEADER } from '../src/notify/senders/webhook.js';
import { scriptRule } from './support/app.js';
import { runCli, startServer, type ServerProcess } from './support/process.js';
import { startReceiver, type Receiver } from './support/receivers.js';
import { waitFor } from './support/wait.js';

/*
 * `pitcrew backup` and `pitcrew restore` (issue 40, docs/operations.md): a backup taken while
 * webhooks keep arriving holds every event answered 202 before it began, its secrets sealed and
 * opened after the restore by the key it names; a restore refuses a non-empty data directory, a
 * newer schema, a file that is not a backup, and a missing or wrong key. Real server processes,
 * the real CLI, SQLite's own files.
 */
const SECRET = 'backup-test-signing-secret-4f1d';
const EGRESS = { PITCREW_EGRESS_ALLOW_NETWORKS: '127.0.0.0/8' };

describe('backup while the service runs, and restore', () => {
  const root = fs.mkdtempSync(path.join(os.tmpdir(), 'pitcrew-backup-'));
  const live = path.join(root, 'live');
  const restored = path.join(root, 'restored');
  const file = path.join(root, 'pitcrew-backup.db');
  let server: ServerProcess | undefined;
  let copy: ServerProcess | undefined;
  let receiver: Receiver;
  let token: string;
  let apiKey: string;
  let channelId: string;

  beforeAll(async () => {
    receiver = await startReceiver();
    const bootstrap = await runCli(['bootstrap', '--json'], { PITCREW_DATA_DIR: live });
    expect(bootstrap.code, bootstrap.stderr).toBe(0);
    ({ apiKey, token } = JSON.parse(bootstrap.stdout) as { apiKey: string; token: string });
    server = await startServer({ PITCREW_DATA_DIR: live, ...EGRESS });
  }, 60_000);
  afterAll(async () => {
    await server?.stop();
    await copy?.stop();
    fs.rmSync(root, { recursive: true, force: true });
  });

  const api = async (base: string, method: string, url: string, body?: unknown) => {
    const response = await fetch(`${base}${url}`, {
      method,
      headers: { authorization: `Bearer ${token}`, ...(body === undefined ? {} : { 'content-type': 'application/json' }) },
      ...(body === undefined ? {} : { body: JSON.stringify(body) }),
    });
    return { status: response.status, body: (await response.json().catch(() => null)) as Record<string, unknown> };
  };

  it('copies a running service under load and restores it whole, secrets and all', { timeout: 180_000 }, async () => {
    const running = server!;
    const rule = await api(running.url, 'POST', '/api/v1/rules', scriptRule({ name: 'backed-up' }));
    expect(rule.status).toBe(201);
    const triggerId = (rule.body.trigger as { triggerId: string }).triggerId;
    const channel = await api(running.url, 'POST', '/api/v1/channels', { name: 'signed', type: 'webhook', mode: 'all', config: { url: receiver.url, secret: SECRET } });
    expect(channel.status, JSON.stringify(channel.body)).toBe(201);
    channelId = channel.body.id as string;

    // Webhooks keep coming, 8 at a time, before, during and after the backup.
    const acknowledged: string[] = [];
    let firing = true;
    const fire = async () => {
      for (let i = 0; firing; i++) {
        const response = await fetch(`${running.url}/api/v1/trigger/channel/webhook/${apiKey}/${triggerId}`, {
          method: 'POST', headers: { 'content-type': 'application/json' }, body: JSON.stringify({ HostName: `web-${i % 50}`, Act: false }),
        });
        if (response.status === 202) acknowledged.push(((await response.json()) as { eventId: string }).eventId);
      }
    };
    const senders = Array.from({ length: 8 }, fire);
    await waitFor(() => acknowledged.length >= 200, '200 webhooks answered', 60_000);
    const beforeBackup = [...acknowledged];
    const backup = await runCli(['backup', file], { PITCREW_DATA_DIR: live });
    const duringBackup = acknowledged.length - beforeBackup.length;
    firing = false;
    await Promise.all(senders);
    expect(backup.code, backup.stderr).toBe(0);
    expect(duringBackup, 'webhooks answered while the backup ran').toBeGreaterThan(0);

    // It says what it holds and which key opens its secrets; the secrets stay sealed in the file.
    const fingerprint = keyFingerprint(readSecretKeyFile(path.join(live, 'secret.key')));
    expect(backup.stdout).toMatch(/^ {2}tenants {4}1$/m);
    expect(backup.stdout).toMatch(/^ {2}rules {6}1$/m);
    expect(backup.stdout).toMatch(/^ {2}schema {5}\d{4}_\w+ \(\d+ migrations\)$/m);
    expect(backup.stdout).toContain(`sealed with key ${fingerprint}`);
    const events = Number(/^ {2}events +([\d,]+)$/m.exec(backup.stdout)![1]!.replace(/,/g, ''));
    expect(events).toBeGreaterThanOrEqual(beforeBackup.length);
    expect(fs.readFileSync(file).includes(SECRET)).toBe(false);
    expect(fs.existsSync(`${file}.partial`)).toBe(false);

    // Without the key, and with another one, the restore is refused and writes nothing.
    const keyless = await runCli(['restore', file], { PITCREW_DATA_DIR: restored });
    expect(keyless.code).toBe(1);
    expect(keyless.stderr).toContain(`with key ${fingerprint}`);
    const otherKey = await runCli(['restore', file], { PITCREW_DATA_DIR: restored, PITCREW_SECRET_KEY: Buffer.alloc(32, 7).toString('base64') });
    expect(otherKey.code).toBe(1);
    expect(otherKey.stderr).toContain(`give the key ${fingerprint}`);
    expect(fs.existsSync(restored)).toBe(false);

    const restore = await runCli(['restore', file, '--secret-key-file', path.join(live, 'secret.key')], { PITCREW_DATA_DIR: restored });
    expect(restore.code, restore.stderr).toBe(0);
    expect(restore.stdout).toContain(`${fingerprint} (${path.join(live, 'secret.key')}) opens its secrets`);

    // A second restore onto it is refused, and leaves it as it was.
    const database = path.join(restored, 'pitcrew.db');
    const before = fs.statSync(database).mtimeMs;
    const again = await runCli(['restore', file, '--secret-key-file', path.join(live, 'secret.key')], { PITCREW_DATA_DIR: restored });
    expect(again.code).toBe(1);
    expect(again.stderr).toContain(`the data directory ${restored} is not empty`);
    expect(fs.statSync(database).mtimeMs).toBe(before);

    copy = await startServer({ PITCREW_DATA_DIR: restored, ...EGRESS });
    for (const eventId of beforeBackup) {
      const event = await api(copy.url, 'GET', `/api/v1/events/${eventId}`);
      expect(event.status, `event ${eventId} answered 202 before the backup began`).toBe(200);
    }
    // The channel's sealed secret opens with the restored key: its test delivery is signed with it.
    const sent = receiver.requests.length;
    const test = await api(copy.url, 'POST', `/api/v1/channels/${channelId}/test`);
    expect(test.status, JSON.stringify(test.body)).toBeLessThan(300);
    await waitFor(() => receiver.requests.length > sent, 'the restored channel\'s test delivery', 20_000);
    const delivery = receiver.requests.at(-1)!;
    const timestamp = Number(delivery.headers[TIMESTAMP_HEADER]);
    expect(delivery.headers[SIGNATURE_HEADER]).toBe(signature(SECRET, timestamp, delivery.raw));
  });

  it('refuses a backup of a newer pitcrew, and a file that is not a backup', { timeout: 60_000 }, async () => {
    const newer = path.join(root, 'newer.db');
    fs.copyFileSync(file, newer);
    const db = new SqliteDatabase(newer);
    db.prepare('insert into pitcrew_migrations (name, timestamp) values (?, ?)').run('9999_from_the_future', new Date().toISOString());
    db.close();
    const refused = await runCli(['restore', newer, '--secret-key-file', path.join(live, 'secret.key')], { PITCREW_DATA_DIR: path.join(root, 'newer-dir') });
    expect(refused.code).toBe(1);
    expect(refused.stderr).toContain('was made by a newer pitcrew (schema 9999_from_the_future');
    expect(fs.existsSync(path.join(root, 'newer-dir'))).toBe(false);

    const junk = path.join(root, 'junk.db');
    fs.writeFileSync(junk, 'not a database at all, just text');
    const notBackup = await runCli(['restore', junk], { PITCREW_DATA_DIR: path.join(root, 'junk-dir') });
    expect(notBackup.code).toBe(1);
    expect(notBackup.stderr).toContain(`${junk} is not a pitcrew backup`);
  });

  it('refuses to overwrite a file, and points PostgreSQL users to its own tools', async () => {
    const exists = await runCli(['backup', file], { PITCREW_DATA_DIR: live });
    expect(exists.code).toBe(1);
    expect(exists.stderr).toContain(`${file} exists already`);
    const postgres = await runCli(['backup', path.join(root, 'pg.db')], { PITCREW_DATA_DIR: live, DATABASE_URL: 'postgres://127.0.0.1:5432/test' });
    expect(postgres.code).toBe(1);
    expect(postgres.stderr).toContain('pg_dump');
  });
});

describe('scheduled backups (PITCREW_BACKUP_SCHEDULE)', () => {
  const root = fs.mkdtempSync(path.join(os.tmpdir(), 'pitcrew-backups-'));
  const dir = path.join(root, 'backups');
  let server: ServerProcess | undefined;

  afterAll(async () => {
    await server?.stop();
    fs.rmSync(root, { recursive: true, force: true });
  });

  it('backs up on the schedule while webhooks arrive, keeping the newest N', { timeout: 90_000 }, async () => {
    const bootstrap = await runCli(['bootstrap', '--json'], { PITCREW_DATA_DIR: path.join(root, 'data') });
    const { apiKey, token } = JSON.parse(bootstrap.stdout) as { apiKey: string; token: string };
    server = await startServer({ PITCREW_DATA_DIR: path.join(root, 'data'), PITCREW_BACKUP_SCHEDULE: '* * * * * *', PITCREW_BACKUP_KEEP: '2', PITCREW_BACKUP_DIR: dir });
    const running = server;
    const made = await fetch(`${running.url}/api/v1/rules`, { method: 'POST', headers: { authorization: `Bearer ${token}`, 'content-type': 'application/json' }, body: JSON.stringify(scriptRule()) });
    const { trigger } = (await made.json()) as { trigger: { triggerId: string } };
    const written = () => running.output().split('\n').filter((line) => line.includes('backup written to')).length;
    let answered = 0;
    while (written() < 4) {
      const response = await fetch(`${running.url}/api/v1/trigger/channel/webhook/${apiKey}/${trigger.triggerId}`, { method: 'POST', headers: { 'content-type': 'application/json' }, body: '{"Act": false}' });
      if (response.status === 202) answered++;
    }
    expect(answered).toBeGreaterThan(0);
    expect(running.output()).not.toContain('the scheduled backup failed');
    // Pruned after each backup: the newest two, each a whole database.
    await waitFor(() => fs.readdirSync(dir).filter((name) => name.endsWith('.db')).length === 2, 'two backups kept', 10_000);
    const kept = fs.readdirSync(dir).filter((name) => name.endsWith('.db'));
    for (const name of kept) {
      const db = new SqliteDatabase(path.join(dir, name), { readonly: true });
      expect(db.pragma('integrity_check', { simple: true })).toBe('ok');
      expect(db.prepare('select count(*) from rules').pluck().get()).toBe(1);
      db.close();
    }
    const metrics = await (await fetch(`${running.metricsUrl}/metrics`)).text();
    expect(Number(/^pitcrew_backups_total\{outcome="ok"\} (\d+)$/m.exec(metrics)?.[1])).toBeGreaterThanOrEqual(4);
  });
});
