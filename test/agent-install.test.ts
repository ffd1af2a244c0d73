import { execFile, spawn } from 'node:child_process';
import fs from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { promisify } from 'node:util';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { startTestEnv, type TestEnv } from './support/app.js';
import { waitOnline } from './support/agents.js';
import { testDialects } from './support/databases.js';

interface InstallInfo {
  server: string;
  fingerprint: string;
  download: { url: string; sha256: string; size: number } | null;
  install: string;
  start: string;
}

// The hosts page shows these commands to people who have no agent yet: they must work as printed.
describe.each(testDialects())('agent install commands on %s', (dialect) => {
  let env: TestEnv;
  let dir: string;
  beforeAll(async () => {
    env = await startTestEnv(dialect, { listen: true });
    dir = fs.mkdtempSync(path.join(os.tmpdir(), 'pitcrew-install-'));
  });
  afterAll(async () => {
    await env.close();
    fs.rmSync(dir, { recursive: true, force: true });
  });

  // Asynchronous: the service answering the download runs in this very process.
  const sh = (script: string) => promisify(execFile)('sh', ['-c', script], { cwd: dir, env: shellEnv() }).then(() => 0, (error: { code?: number }) => error.code ?? 1);
  const shellEnv = (extra: Record<string, string> = {}) => ({ PATH: `${path.dirname(process.execPath)}:${process.env.PATH ?? '/usr/bin:/bin'}`, HOME: dir, ...extra });

  it('names this service, its certificate, and an agent file with its digest', async () => {
    const response = await fetch(`${env.listening!.httpUrl}/api/v1/agents/install`, { headers: { authorization: `Bearer ${env.tenant.token}` } });
    expect(response.status).toBe(200);
    const info = (await response.json()) as InstallInfo;
    expect(info.server).toBe(env.listening!.httpsUrl);
    expect(info.fingerprint).toBe(env.listening!.fingerprint);
    expect(info.download).toMatchObject({ url: `${env.listening!.httpUrl}/downloads/pitcrew-agent.mjs`, sha256: expect.stringMatching(/^[0-9a-f]{64}$/) });
    expect(info.start).toContain(`--server ${info.server} --server-fingerprint ${info.fingerprint}`);
  });

  it('installs with the printed command, refuses a tampered file, and the printed start command connects', async () => {
    const info = (await (await fetch(`${env.listening!.httpUrl}/api/v1/agents/install`, { headers: { authorization: `Bearer ${env.tenant.token}` } })).json()) as InstallInfo;
    expect(await sh(info.install)).toBe(0);
    expect(fs.statSync(path.join(dir, 'pitcrew-agent.mjs')).size).toBe(info.download!.size);

    // The digest check is what makes a download over plain HTTP safe to run.
    const tampered = info.install.replace(/echo '[0-9a-f]{64}/, `echo '${'0'.repeat(64)}`);
    expect(await sh(tampered)).not.toBe(0);

    const agent = spawn('sh', ['-c', `exec ${info.start} --hostname installed-1 --state-dir ./state --allow-root`], {
      cwd: dir, env: shellEnv({ PITCREW_API_KEY: env.tenant.apiKey }), stdio: 'ignore',
    });
    const exited = new Promise((resolve) => agent.once('exit', resolve));
    try {
      await waitOnline(env.api, 'installed-1');
    } finally {
      agent.kill('SIGTERM');
      await exited;
    }
  });

  it('answers 401 without a token; the agent file itself needs none', async () => {
    expect((await env.api('GET', '/api/v1/agents/install', undefined, 'pct_nope')).statusCode).toBe(401);
    const file = await env.app.server.inject({ method: 'GET', url: '/downloads/pitcrew-agent.mjs' });
    expect(file.statusCode).toBe(200);
    expect(file.headers['content-type']).toMatch(/^text\/javascript/);
    expect(file.body.startsWith('#!/usr/bin/env node')).toBe(true);
  });
});
