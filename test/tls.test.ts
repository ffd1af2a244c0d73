import { execFileSync } from 'node:child_process';
import fs from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { scriptRule } from './support/app.js';
import { spawnAgent, type AgentProcess } from './support/agents.js';
import { createTestDatabase, type TestDatabase } from './support/databases.js';
import { runCli, startServer, type ServerProcess } from './support/process.js';
import { waitFor } from './support/wait.js';

/*
 * The service with a certificate of the operator's own (PITCREW_TLS_CERT/KEY), made here by
 * openssl with a CA, and an agent that trusts that CA (--ca-file): standard TLS, no pin.
 * The storage plays no part, so one database is enough.
 */
describe('a configured TLS certificate', () => {
  let dir: string;
  let database: TestDatabase;
  let server: ServerProcess | undefined;
  let agent: AgentProcess | undefined;

  const openssl = (...args: string[]) => execFileSync('openssl', args, { cwd: dir, stdio: 'pipe' });
  /** A key and a certificate for 127.0.0.1 signed by the test CA, valid for `days`. */
  function issue(name: string, days: number): { cert: string; key: string } {
    openssl('req', '-newkey', 'ec', '-pkeyopt', 'ec_paramgen_curve:P-256', '-nodes', '-keyout', `${name}.key`, '-out', `${name}.csr`, '-subj', `/CN=${name}`);
    fs.writeFileSync(path.join(dir, `${name}.ext`), 'subjectAltName=IP:127.0.0.1,DNS:localhost\n');
    openssl('x509', '-req', '-in', `${name}.csr`, '-CA', 'ca.pem', '-CAkey', 'ca.key', '-CAcreateserial', '-days', String(days), '-extfile', `${name}.ext`, '-out', `${name}.pem`);
    return { cert: path.join(dir, `${name}.pem`), key: path.join(dir, `${name}.key`) };
  }

  beforeAll(async () => {
    dir = fs.mkdtempSync(path.join(os.tmpdir(), 'pitcrew-tls-'));
    openssl('req', '-x509', '-newkey', 'ec', '-pkeyopt', 'ec_paramgen_curve:P-256', '-nodes', '-keyout', 'ca.key', '-out', 'ca.pem', '-days', '30', '-subj', '/CN=pitcrew test CA');
    database = await createTestDatabase('sqlite');
  });
  afterAll(async () => {
    await agent?.kill();
    await server?.kill();
    await database.drop();
    fs.rmSync(dir, { recursive: true, force: true });
  });

  it('serves agents that trust its CA, and runs their scripts', async () => {
    const { cert, key } = issue('service', 5);
    const tenant = JSON.parse((await runCli(['bootstrap', '--json'], database.env)).stdout) as { apiKey: string; token: string };
    server = await startServer({ ...database.env, PITCREW_TLS_CERT: cert, PITCREW_TLS_KEY: key });
    expect(server.output()).toContain('"selfSigned":false');
    expect(fs.existsSync(path.join(database.dataDir, 'tls'))).toBe(false);
    // Five days left: said at start, so it is renewed before agents are cut off.
    expect(server.output()).toMatch(/"level":40.*the TLS certificate expires on .*, in [45] days: renew it/);

    agent = spawnAgent({ server: server.httpsUrl, apiKey: tenant.apiKey, hostname: 'tls-1', args: ['--ca-file', path.join(dir, 'ca.pem')] });
    const api = async (method: string, url: string, body?: unknown) => {
      const response = await fetch(`${server!.url}${url}`, { method, headers: { authorization: `Bearer ${tenant.token}`, 'content-type': 'application/json' }, body: body === undefined ? undefined : JSON.stringify(body) });
      return (await response.json()) as Record<string, any>; // eslint-disable-line @typescript-eslint/no-explicit-any
    };
    await waitFor(async () => (await api('GET', '/api/v1/hosts?hostname=tls-1')).items[0]?.status === 'online', 'the agent online over the configured certificate');
    const rule = await api('POST', '/api/v1/rules', scriptRule({ target: { type: 'specific_host', hostname: 'tls-1' }, action: { type: 'script', flavour: 'autofix', runbook: { script: 'echo over-tls' } } }));
    const reply = await fetch(`${server.url}/api/v1/trigger/channel/webhook/${tenant.apiKey}/${rule.trigger.triggerId}`, { method: 'POST' });
    const [id] = ((await reply.json()) as { executionIds: string[] }).executionIds;
    const done = await waitFor(async () => {
      const execution = await api('GET', `/api/v1/executions/${id}`);
      return execution.state === 'succeeded' ? execution : undefined;
    }, 'the script to run');
    expect(done.stdout).toBe('over-tls\n');
  });

  it('refuses to start, with the variable to fix, when the key is not the certificate’s', async () => {
    const { cert } = issue('mismatch-a', 5);
    const other = issue('mismatch-b', 5);
    const dataDir = fs.mkdtempSync(path.join(dir, 'data-'));
    const env = { PITCREW_DATA_DIR: dataDir, PORT: '0', PITCREW_TLS_PORT: '0', PITCREW_TLS_KEY: other.key };
    const result = await runCli(['server'], { ...env, PITCREW_TLS_CERT: cert });
    expect(result.code).toBe(2);
    expect(result.stderr.trim()).toBe(`pitcrew: PITCREW_TLS_KEY: ${other.key} is not the key of the certificate in ${cert} (the file's first certificate must be the server's own, then its chain)`);
    // Refused before anything started: no database was made.
    expect(fs.readdirSync(dataDir)).not.toContain('pitcrew.db');

    const missing = await runCli(['server'], { ...env, PITCREW_TLS_CERT: path.join(dir, 'nope.pem') });
    expect(missing.stderr.trim()).toBe(`pitcrew: PITCREW_TLS_CERT: cannot read ${path.join(dir, 'nope.pem')} (ENOENT)`);
  });
});
