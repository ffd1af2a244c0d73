import { spawn } from 'node:child_process';
import { randomBytes } from 'node:crypto';
import { sql } from 'kysely';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { SecretBox, sealedKeyId } from '../src/identity/secret-box.js';
import { signature, SIGNATURE_HEADER, TIMESTAMP_HEADER } from '../src/notify/senders/webhook.js';
import { SEALED_COLUMNS } from '../src/secrets/sealed-columns.js';
import { createTestDatabase, testDialects, type TestDatabase } from './support/databases.js';
import { PITCREW_BIN, runCli, startServer, type ServerProcess } from './support/process.js';
import { startReceiver, type Receiver } from './support/receivers.js';
import { waitFor } from './support/wait.js';

/*
 * `pitcrew secrets rotate` (issue 40, docs/operations.md#secret-key-rotation): killed halfway
 * (SIGKILL), run again, it ends with every stored secret sealed with the new key: the new key
 * alone opens each, the old one none. Meanwhile the service, given both keys, opens secrets of
 * either, and no value is ever stored in clear. Real server and CLI processes, both databases.
 */
const CHANNELS = 30;
const b64 = (key: Buffer) => key.toString('base64');

describe.each(testDialects())('secret-key rotation on %s', (dialect) => {
  const oldKey = randomBytes(32);
  const newKey = randomBytes(32);
  let database: TestDatabase;
  let server: ServerProcess | undefined;
  let receiver: Receiver;
  let token: string;
  const channels: Array<{ id: string; secret: string }> = [];

  beforeAll(async () => {
    database = await createTestDatabase(dialect);
    receiver = await startReceiver();
  });
  afterAll(async () => {
    await server?.stop();
    await database?.drop();
  });

  const env = (keys: { key: Buffer; previous?: Buffer }) => ({
    ...database.env, PITCREW_EGRESS_ALLOW_NETWORKS: '127.0.0.0/8', PITCREW_SECRET_KEY: b64(keys.key), ...(keys.previous ? { PITCREW_SECRET_KEY_PREVIOUS: b64(keys.previous) } : {}),
  });
  const api = async (method: string, url: string, body?: unknown) => {
    const response = await fetch(`${server!.url}${url}`, {
      method, headers: { authorization: `Bearer ${token}`, ...(body === undefined ? {} : { 'content-type': 'application/json' }) }, ...(body === undefined ? {} : { body: JSON.stringify(body) }),
    });
    return { status: response.status, body: (await response.json().catch(() => null)) as Record<string, unknown> };
  };
  /** Every sealed value in the database, wherever it is. */
  const sealedValues = async () => {
    const store = database.open();
    try {
      const values: Array<{ owner: string; value: string }> = [];
      for (const column of SEALED_COLUMNS) {
        const rows = (await sql<{ k: string; v: string }>`select ${sql.ref(column.key)} as k, ${sql.ref(column.column)} as v from ${sql.table(column.table)} where ${sql.ref(column.column)} is not null`.execute(store.db)).rows;
        values.push(...rows.map((row) => ({ owner: column.owner(row.k), value: row.v })));
      }
      return values;
    } finally {
      await store.close();
    }
  };
  /** A test delivery of the channel, signed with its own secret: the service opened it. */
  const deliversSigned = async (channel: { id: string; secret: string }) => {
    const sent = receiver.requests.length;
    const test = await api('POST', `/api/v1/channels/${channel.id}/test`);
    expect(test.status, JSON.stringify(test.body)).toBeLessThan(300);
    await waitFor(() => receiver.requests.length > sent, 'the channel\'s test delivery');
    const delivery = receiver.requests.at(-1)!;
    expect(delivery.headers[SIGNATURE_HEADER]).toBe(signature(channel.secret, Number(delivery.headers[TIMESTAMP_HEADER]), delivery.raw));
  };

  it('re-seals every secret, resumes after kill -9, and leaves the old key opening nothing', { timeout: 300_000 }, async () => {
    const bootstrap = await runCli(['bootstrap', '--json'], env({ key: oldKey }));
    expect(bootstrap.code, bootstrap.stderr).toBe(0);
    token = (JSON.parse(bootstrap.stdout) as { token: string }).token;
    server = await startServer(env({ key: oldKey }));
    // Made 6 at a time: each is a sealed secret and an audit entry, slow one by one on a busy machine.
    for (let first = 0; first < CHANNELS; first += 6) {
      const made = await Promise.all(Array.from({ length: Math.min(6, CHANNELS - first) }, async (_, offset) => {
        const secret = `signing-secret-${first + offset}-${randomBytes(6).toString('hex')}`;
        const reply = await api('POST', '/api/v1/channels', { name: `hook-${first + offset}`, type: 'webhook', mode: 'all', config: { url: receiver.url, secret } });
        expect(reply.status, JSON.stringify(reply.body)).toBe(201);
        return { id: reply.body.id as string, secret };
      }));
      channels.push(...made);
    }
    // Sealed oldest first by id: the channels in the order of their ids.
    channels.sort((a, b) => (a.id < b.id ? -1 : 1));
    expect((await api('POST', '/api/v1/credentials', { name: 'aws', provider: 'aws', secret: { accessKeyId: 'AKIAROTATIONTEST0001', secretAccessKey: 'rotation/test/secret/key/0000000000000000' } })).status).toBe(201);
    expect((await api('POST', '/api/v1/integrations', { name: 'grafana', type: 'grafana', secret: 'grafana-shared-secret-rotation', graphSecret: 'glsa_RotationGraphToken000000000_0a1b2c3d' })).status).toBe(201);
    const total = (await sealedValues()).length;
    expect(total).toBe(CHANNELS + 3);

    // The service restarts with both keys and keeps running through the rotation.
    await server.stop();
    server = await startServer(env({ key: newKey, previous: oldKey }));

    // A rotation killed halfway: some secrets sealed with the new key, the rest still with the old.
    const rotation = spawn(process.execPath, [PITCREW_BIN, 'secrets', 'rotate', '--batch', '3', '--pause-ms', '300'], { env: { PATH: process.env.PATH, ...env({ key: newKey, previous: oldKey }) }, stdio: ['ignore', 'pipe', 'pipe'] });
    let output = '';
    rotation.stdout.on('data', (chunk) => (output += chunk));
    rotation.stderr.on('data', (chunk) => (output += chunk));
    const exited = new Promise((resolve) => rotation.once('exit', resolve));
    await waitFor(() => /notify_channels\.secrets: ([3-9]|1[0-5]) of \d+/.test(output), 'the rotation under way', 60_000);
    rotation.kill('SIGKILL');
    await exited;
    const newBox = new SecretBox(newKey);
    const oldBox = new SecretBox(oldKey);
    const halfway = await sealedValues();
    const byKey = (values: Array<{ value: string }>, box: SecretBox) => values.filter((entry) => sealedKeyId(entry.value) === box.keyId).length;
    expect(byKey(halfway, newBox)).toBeGreaterThan(0);
    expect(byKey(halfway, oldBox)).toBeGreaterThan(0);
    expect(byKey(halfway, newBox) + byKey(halfway, oldBox)).toBe(total);

    // Halfway, the service opens secrets of both keys (rows are re-sealed oldest first: the first channel's is new, the last's old).
    expect(sealedKeyId(halfway.find((entry) => entry.owner === channels[0]!.id)!.value)).toBe(newBox.keyId);
    expect(sealedKeyId(halfway.find((entry) => entry.owner === channels.at(-1)!.id)!.value)).toBe(oldBox.keyId);
    await deliversSigned(channels[0]!);
    await deliversSigned(channels.at(-1)!);

    const resumed = await runCli(['secrets', 'rotate'], env({ key: newKey, previous: oldKey }));
    expect(resumed.code, resumed.stderr).toBe(0);
    expect(resumed.stdout).toContain(`every secret is sealed with key ${newBox.keyId}`);

    const after = await sealedValues();
    expect(after).toHaveLength(total);
    for (const { owner, value } of after) {
      expect(sealedKeyId(value)).toBe(newBox.keyId);
      expect(() => newBox.open(value, owner)).not.toThrow();
      expect(() => oldBox.open(value, owner)).toThrow(/sealed with key/);
    }

    // Without the previous key the service opens every secret with the new one alone.
    await server.stop();
    server = await startServer(env({ key: newKey }));
    await deliversSigned(channels.at(-1)!);
  });

  it('refuses to run without the key it replaces, or with the same key twice', async () => {
    const none = await runCli(['secrets', 'rotate'], env({ key: newKey }));
    expect(none.code).toBe(1);
    expect(none.stderr).toContain('set PITCREW_SECRET_KEY_PREVIOUS to the key being replaced');
    const same = await runCli(['secrets', 'rotate'], env({ key: newKey, previous: newKey }));
    expect(same.code).toBe(1);
    expect(same.stderr).toContain('are the same key');
  });
});
