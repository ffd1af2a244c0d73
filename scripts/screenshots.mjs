// `npm run screenshots`: starts a real pitcrew server and real agents on loopback, fills a tenant
// with demo rules, events and executions through the public API, then photographs every page of
// the web UI at 1440x900 into docs/screenshots/. Everything it starts, it stops.
/* global fetch */
import { spawn, spawnSync } from 'node:child_process';
import fs from 'node:fs';
import http from 'node:http';
import net from 'node:net';
import os from 'node:os';
import path from 'node:path';
import { fileURLToPath } from 'node:url';
import { launchChromium } from './chromium.mjs';

const root = path.resolve(path.dirname(fileURLToPath(import.meta.url)), '..');
const out = path.join(root, 'docs/screenshots');
const work = fs.mkdtempSync(path.join(os.tmpdir(), 'pitcrew-screenshots-'));
const children = [];
const servers = [];

const freePort = () =>
  new Promise((resolve, reject) => {
    const server = net.createServer().once('error', reject);
    server.listen(0, '127.0.0.1', () => {
      const { port } = server.address();
      server.close(() => resolve(port));
    });
  });

function start(args, env, ready) {
  const child = spawn(process.execPath, args, { cwd: root, env: { PATH: process.env.PATH, HOME: work, ...env }, stdio: ['ignore', 'pipe', 'pipe'] });
  children.push(child);
  let output = '';
  const collect = (chunk) => (output += chunk);
  child.stdout.on('data', collect);
  child.stderr.on('data', collect);
  if (!ready) return Promise.resolve(child);
  return new Promise((resolve, reject) => {
    const check = () => ready(output) && resolve(child);
    child.stdout.on('data', check);
    child.stderr.on('data', check);
    child.once('exit', (code) => reject(new Error(`${args.join(' ')} exited with ${code}:\n${output}`)));
  });
}

async function until(what, check, timeoutMs = 30_000) {
  const deadline = Date.now() + timeoutMs;
  for (;;) {
    const value = await check().catch(() => undefined);
    if (value) return value;
    if (Date.now() > deadline) throw new Error(`timed out waiting for ${what}`);
    await new Promise((resolve) => setTimeout(resolve, 100));
  }
}

async function main() {
  fs.mkdirSync(out, { recursive: true });
  const port = await freePort();
  const tlsPort = await freePort();
  const serverEnv = {
    PITCREW_DATA_DIR: path.join(work, 'data'), PORT: String(port), PITCREW_TLS_PORT: String(tlsPort), PITCREW_METRICS_ADDR: 'off', HOST: '127.0.0.1', PITCREW_LOG_LEVEL: 'warn', PITCREW_AGENT_HEARTBEAT_SECONDS: '2', PITCREW_RETENTION_DAYS: '90',
    // Failing demo channels give up after a few quick tries, so their attempts show in the pictures.
    PITCREW_NOTIFY_BACKOFF_BASE_MS: '300', PITCREW_NOTIFY_MAX_ATTEMPTS: '3', PITCREW_NOTIFY_GROUP_WAIT_SECONDS: '5',
    // The demo receivers listen on loopback, which notifications may reach only when opened.
    PITCREW_EGRESS_ALLOW_NETWORKS: '127.0.0.0/8',
  };
  const bootstrap = (tenant) => JSON.parse(spawnSync(process.execPath, ['bin/pitcrew.js', 'bootstrap', '--json', '--tenant', tenant], { cwd: root, env: { PATH: process.env.PATH, ...serverEnv }, encoding: 'utf8' }).stdout);
  const ops = bootstrap('acme-ops');
  const fresh = bootstrap('new-team');
  await start(['bin/pitcrew.js', 'server'], { ...serverEnv, PITCREW_LOG_LEVEL: 'info' }, (output) => output.includes('agents connect to'));
  const base = `http://127.0.0.1:${port}`;
  const api = async (method, url, body, token = ops.token) => {
    const response = await fetch(base + url, { method, headers: { authorization: `Bearer ${token}`, ...(body ? { 'content-type': 'application/json' } : {}) }, body: body ? JSON.stringify(body) : undefined });
    if (!response.ok) throw new Error(`${method} ${url}: ${response.status} ${await response.text()}`);
    return response.status === 204 ? undefined : response.json();
  };
  const fingerprint = (await api('GET', '/api/v1/agents/install')).fingerprint;

  const agent = (hostname, tags) =>
    start(['dist/pitcrew-agent.mjs', '--server', `https://127.0.0.1:${tlsPort}`, '--server-fingerprint', fingerprint, '--hostname', hostname, '--tags', tags.join(','),
      '--state-dir', path.join(work, `agent-${hostname}`), ...(process.getuid?.() === 0 ? ['--allow-root'] : [])], { PITCREW_API_KEY: ops.apiKey });
  const online = (hostname) => until(`${hostname} online`, async () => (await api('GET', `/api/v1/hosts?hostname=${hostname}`)).items[0]?.status === 'online');
  for (const [hostname, tags] of [['web-1', ['web', 'nginx', 'eu']], ['web-2', ['web', 'nginx', 'us']], ['db-1', ['db', 'postgres', 'eu']], ['cache-1', ['cache', 'eu']]]) await agent(hostname, tags);
  for (const hostname of ['web-1', 'web-2', 'db-1', 'cache-1']) await online(hostname);
  // cache-1's agent stops, so the hosts page shows an offline host too.
  const cache = children.at(-1);
  cache.kill('SIGTERM');
  await until('cache-1 offline', async () => (await api('GET', '/api/v1/hosts?hostname=cache-1')).items[0]?.status === 'offline');
  const cacheHost = (await api('GET', '/api/v1/hosts?hostname=cache-1')).items[0];
  await api('PATCH', `/api/v1/hosts/${cacheHost.id}`, { tags: ['redis'] });

  const rule = (name, target, script, extra = {}) =>
    api('POST', '/api/v1/rules', { name, trigger: { type: 'webhook' }, action: { type: 'script', flavour: extra.flavour ?? 'autofix', runbook: { script, interpreter: 'bash', notes: extra.notes }, timeoutSeconds: 120 }, target, infrastructureType: 'On_Premise', ...extra.rule });
  const disk = await rule('disk full on web', { type: 'trigger_host' }, '#!/bin/bash\n# Free space: old compressed logs go first.\nset -euo pipefail\necho "cleaning /var/log on $HostName ($Severity)"\nfind /tmp -maxdepth 1 -name "pitcrew-demo-*.gz" -mtime +7 -print\necho "freed 1.2G"\n', {
    notes: 'Deletes compressed logs older than a week. If the disk is still over 90 %, page the on-call.',
    rule: { flapping: { enabled: true, maxEvents: 5, windowSeconds: 300, cooldownSeconds: 600 }, actionLimit: { max: 3, windowSeconds: 3600, onLimit: 'escalate' } },
  });
  const nginx = await rule('restart nginx on the web fleet', { type: 'specific_tags', tags: ['web', 'nginx'] }, 'echo "reloading nginx on $PITCREW_HOSTNAME"\necho "nginx: configuration file /etc/nginx/nginx.conf test is successful"\n');
  const pg = await rule('postgres diagnostics', { type: 'specific_host', hostname: 'db-1' }, 'uptime > "$PITCREW_ARTIFACTS/uptime.txt"\ndf -h > "$PITCREW_ARTIFACTS/disk.txt"\nps aux --sort=-%cpu | head -20 > "$PITCREW_ARTIFACTS/top.txt"\necho "collected 3 files"\n', { flavour: 'diagnostics' });
  const certs = await rule('renew TLS certificates', { type: 'trigger_host' }, 'echo "renewing certificates for $AppName"\necho "error: ACME server refused the order (rate limited)" >&2\nexit 2\n');
  const drain = await rule('drain and reboot', { type: 'trigger_host' }, 'for step in $(seq 1 30); do\n  echo "draining connections: batch $step of 30"\n  sleep 1\ndone\necho "rebooting"\n');
  const cacheRule = await rule('flush redis cache', { type: 'specific_tags', tags: ['redis'] }, 'redis-cli FLUSHALL\n', { rule: { enabled: false } });
  const php = await rule('restart php-fpm', { type: 'trigger_host' }, 'echo "restarting php-fpm on $HostName"\n', {
    rule: { actionLimit: { max: 2, windowSeconds: 3600, onLimit: 'escalate' }, flapping: { enabled: true, maxEvents: 20, windowSeconds: 300, cooldownSeconds: 600, maxStateChanges: 4 } },
  });
  const rollout = await rule('rolling nginx upgrade', { type: 'specific_tags', tags: ['web', 'nginx'], maxConcurrency: 1, maxErrors: 1 }, 'echo "upgrading nginx on $PITCREW_HOSTNAME"\nsleep 30\n');

  // A stored runbook saved twice, which a rule follows: its page, and what the second save changed.
  const notes = '# Stale DNS cache\n\n**When**: resolution errors on a host while its upstream resolver answers.\n\n- flushes `systemd-resolved`\n- checks the name given as `$LookupName`\n\nIf lookups still fail, page the network on-call.';
  const dns = await api('POST', '/api/v1/runbooks', { name: 'flush dns cache', interpreter: 'bash', env: ['LookupName'], description: notes, script: '#!/bin/bash\nset -e\nresolvectl flush-caches\nresolvectl query "${LookupName:-example.com}"\necho done\n' });
  await api('PUT', `/api/v1/runbooks/${dns.id}`, { name: 'flush dns cache', interpreter: 'bash', env: ['LookupName'], description: notes, script: '#!/bin/bash\nset -euo pipefail\nresolvectl flush-caches\nresolvectl statistics | grep -i "current cache size"\nresolvectl query "${LookupName:-example.com}"\necho "cache flushed on $HostName"\n' });
  await api('POST', '/api/v1/rules', { name: 'dns stale', trigger: { type: 'webhook' }, action: { type: 'script', flavour: 'autofix', runbook: { runbookId: dns.id } }, target: { type: 'trigger_host' }, infrastructureType: 'On_Premise' });

  const chat = await startChatReceiver();
  const channel = (body) => api('POST', '/api/v1/channels', body);
  const slack = await channel({ name: '#ops on Slack', type: 'slack', mode: 'all', config: { webhookUrl: `${chat.url}/services/T024BE7LD/B0C1/pitcrew` } });
  const mail = await channel({ name: 'on-call mail', type: 'email', mode: 'errors',
    config: { host: '127.0.0.1', port: await freePort(), secure: false, username: 'pitcrew', password: 'demo-password', from: 'pitcrew <pitcrew@acme.example>', to: ['oncall@acme.example', 'dba@acme.example'] } });
  await channel({ name: 'event bus', type: 'webhook', mode: 'all', ruleIds: [nginx.id], config: { url: `${chat.url}/pitcrew/events`, secret: 'demo-signing-secret-0123456789' } });
  const mattermost = await channel({ name: 'SRE on Mattermost', type: 'mattermost', mode: 'errors', config: { webhookUrl: `${chat.url}/hooks/gone` } });
  await channel({ name: 'Teams NOC', type: 'teams', mode: 'disabled', config: { webhookUrl: `${chat.url}/workflows/noc` } });
  await api('PUT', '/api/v1/escalation-contacts', { emails: ['oncall@acme.example'], channelIds: [slack.id], emailChannelId: mail.id });

  const fire = async (r, body) => (await fetch(`${base}/api/v1/trigger/channel/webhook/${ops.apiKey}/${r.trigger.triggerId}`, { method: 'POST', headers: { 'content-type': 'application/json' }, body: JSON.stringify(body) })).json();
  const finished = (id) => until(`execution ${id}`, async () => ['succeeded', 'failed', 'timed_out', 'cancelled'].includes((await api('GET', `/api/v1/executions/${id}`)).state));
  const alert = { AlarmName: 'disk_full', Severity: 'critical', Source: 'nagios', MetaData: { Mount: '/var', UsedPercent: '97' } };
  for (const id of (await fire(disk, { ...alert, HostName: 'web-1' })).executionIds) await finished(id);
  for (const id of (await fire(disk, { ...alert, HostName: 'web-2' })).executionIds) await finished(id);
  await fire(disk, { ...alert, HostName: 'web-1', Act: false });
  await fire(disk, { ...alert, HostName: 'mail-9', MetaData: { 'disk-usage': '91', PATH: '/tmp' } });
  for (const id of (await fire(nginx, { AlarmName: '5xx_rate', Severity: 'warning' })).executionIds) await finished(id);
  const diagnostics = (await fire(pg, { AlarmName: 'replication_lag', HostName: 'db-1', Severity: 'warning' })).executionIds[0];
  await finished(diagnostics);
  for (const id of (await fire(certs, { HostName: 'web-2', AppName: 'shop', Severity: 'critical' })).executionIds) await finished(id);
  await fire(cacheRule, { AlarmName: 'memory_high', HostName: 'cache-1' });
  // An alert storm past the action limit: two hosts limited, each with an escalation for a person.
  const storm = [...Array(7).fill('web-1'), ...Array(3).fill('web-2'), 'db-1'];
  for (const hostname of storm) for (const id of (await fire(php, { AlarmName: '502_rate', HostName: hostname, Severity: 'critical' })).executionIds) await finished(id);

  const { context, close } = await launchChromium({ width: 1440, height: 900, colorScheme: 'dark' });
  try {
    const page = context.pages()[0] ?? (await context.newPage());
    // Each shot waits for what it shows (an open event stream never lets the network go idle).
    const shot = async (name) => {
      await page.screenshot({ path: path.join(out, `${name}.png`) });
      console.log(`docs/screenshots/${name}.png`);
    };
    await page.goto(`${base}/rules`);
    await page.getByLabel('Management token').fill(ops.token);
    await shot('01-sign-in');
    await page.getByRole('button', { name: 'Sign in' }).click();
    await page.getByRole('link', { name: 'disk full on web' }).waitFor();
    await shot('02-rules');

    await page.getByRole('switch', { name: 'Turn off restart nginx on the web fleet' }).click();
    await page.getByRole('dialog').waitFor();
    await shot('03-rule-turn-off');
    await page.getByRole('button', { name: 'Cancel' }).click();

    await page.getByRole('link', { name: /New rule/ }).click();
    await page.getByLabel('Rule name').fill('restart php-fpm on web');
    await shot('04-wizard-trigger');
    await page.getByRole('button', { name: 'Next' }).click();
    await page.getByRole('button', { name: 'Next' }).click();
    await page.getByText('Hosts with tags').click();
    await page.getByRole('textbox', { name: 'Tags' }).fill('web');
    await page.getByRole('textbox', { name: 'Tags' }).press('Enter');
    await page.getByText(/2 hosts match/).waitFor();
    await page.getByLabel('Hosts at once').fill('1');
    await page.getByLabel('Failed hosts before stopping').fill('1');
    await shot('05-wizard-target');
    await page.getByRole('button', { name: 'Next' }).click();
    await page.locator('.cm-content').waitFor();
    await shot('06-wizard-runbook');
    await page.getByRole('link', { name: 'Cancel' }).click();

    await page.getByRole('link', { name: 'disk full on web' }).click();
    await page.locator('tr[data-outcome="no_target"]').getByRole('button', { name: 'Payload' }).click();
    // Opening the payload scrolled to it; the picture is of the rule's head: webhook and settings.
    await page.evaluate('window.scrollTo(0, 0)');
    await shot('07-rule');

    await page.goto(`${base}/rules/${php.id}`);
    await page.locator('tr[data-host="web-1"]', { hasText: '5 limited events' }).waitFor();
    await page.getByRole('heading', { name: 'Action limit per host' }).evaluate((heading) => heading.scrollIntoView({ block: 'start' }));
    await shot('15-rule-limits');
    await page.goto(`${base}/escalations`);
    await page.locator('tr', { hasText: 'web-2' }).waitFor();
    await shot('16-escalations');

    const running = (await fire(drain, { HostName: 'web-1', AlarmName: 'kernel_update', Severity: 'info' })).executionIds[0];
    await fire(rollout, { AlarmName: 'nginx_cve', Severity: 'warning' });
    await page.goto(`${base}/executions`);
    await page.getByRole('link', { name: /running/ }).first().waitFor();
    await page.getByRole('link', { name: /held/ }).first().waitFor();
    await shot('08-executions');
    await page.goto(`${base}/executions/${running}`);
    await page.locator('pre[data-stream="stdout"]').getByText('batch 3 of 30').waitFor();
    await shot('09-execution-live');
    await page.goto(`${base}/executions/${diagnostics}`);
    await page.getByRole('button', { name: 'top.txt' }).waitFor();
    await shot('10-execution');

    await page.goto(`${base}/runbooks/${dns.id}`);
    await page.locator('[data-used-by]').waitFor();
    await shot('25-runbook');
    await page.goto(`${base}/runbooks/${dns.id}/diff?from=1&to=2`);
    await page.locator('.diff [data-kind="add"]').first().waitFor();
    await shot('26-runbook-diff');

    await page.goto(`${base}/hosts`);
    await page.locator('tr[data-host="cache-1"]').waitFor();
    await shot('11-hosts');
    await page.goto(`${base}/api-keys`);
    await page.getByRole('button', { name: 'Revoke and regenerate' }).first().click();
    await page.getByRole('dialog').waitFor();
    await shot('12-api-keys');

    await page.getByRole('button', { name: 'Cancel' }).click();

    await page.goto(`${base}/settings`);
    const allowlist = page.locator('form', { has: page.getByRole('heading', { name: 'IP allowlist' }) });
    for (const cidr of ['203.0.113.0/24', '2001:db8::/32']) {
      await allowlist.getByRole('button', { name: 'Add an address' }).click();
      await page.keyboard.type(cidr);
    }
    await page.getByText("This tenant's own").click();
    await page.getByLabel('Rate (calls per second)').fill('200');
    await page.getByLabel('Burst (calls)').fill('500');
    await shot('17-tenant-settings');
    await allowlist.getByRole('button', { name: 'Save allowlist' }).click();
    await page.getByRole('dialog').waitFor();
    await shot('18-allowlist-confirm');
    await page.getByRole('button', { name: 'Cancel' }).click();
    await page.goto(`${base}/channels`);
    await page.locator('tr[data-channel="SRE on Mattermost"] .badge', { hasText: 'failing' }).waitFor();
    await page.locator('tr[data-channel="#ops on Slack"] .badge', { hasText: 'ok' }).waitFor();
    await shot('20-channels');
    await page.goto(`${base}/channels/${slack.id}`);
    await page.getByRole('button', { name: 'Send test message' }).click();
    await page.getByText(/Delivered at/).waitFor();
    await shot('21-channel');
    await page.goto(`${base}/channels/${mattermost.id}`);
    await page.getByRole('button', { name: 'Send test message' }).click();
    await page.getByText(/Not delivered at/).waitFor();
    await shot('22-channel-test-failed');
    await page.goto(`${base}/channels/${mail.id}/edit`);
    await page.getByText('A password is set.', { exact: false }).waitFor();
    await shot('23-channel-form-email');
    await page.goto(`${base}/channels/new`);
    await page.getByRole('radio', { name: /^Webhook/ }).check();
    await page.getByLabel('Name', { exact: true }).fill('audit log');
    await page.getByLabel('Receiver URL').fill('https://events.acme.example/pitcrew');
    await page.getByText('How your receiver verifies the signature').click();
    await shot('24-channel-form-webhook');

    // The same dashboard for people whose system asks for a light theme.
    await page.emulateMedia({ colorScheme: 'light' });
    await page.goto(`${base}/rules`);
    await page.getByRole('link', { name: 'disk full on web' }).waitFor();
    await shot('14-rules-light');
    await page.emulateMedia({ colorScheme: 'dark' });

    // A tenant that has just started: the empty states, including how to connect the first agent.
    await page.getByRole('button', { name: 'Sign out' }).click();
    await page.getByLabel('Management token').fill(fresh.token);
    await page.getByRole('button', { name: 'Sign in' }).click();
    await page.goto(`${base}/hosts`);
    await page.getByText('No host has an agent yet').waitFor();
    await page.getByLabel('start command').waitFor();
    await shot('13-hosts-empty');
  } finally {
    await close();
  }
}

/** A stand-in for Slack and the other receivers: accepts everything, except a removed webhook. */
async function startChatReceiver() {
  const server = http.createServer((request, response) => {
    request.resume();
    request.on('end', () => {
      const gone = request.url?.startsWith('/hooks/gone');
      response.writeHead(gone ? 404 : 200, { 'content-type': 'text/plain' });
      response.end(gone ? 'no_service' : 'ok');
    });
  });
  await new Promise((resolve) => server.listen(0, '127.0.0.1', resolve));
  servers.push(server);
  return { url: `http://127.0.0.1:${server.address().port}` };
}

main()
  .then(() => (process.exitCode = 0), (error) => {
    console.error(error);
    process.exitCode = 1;
  })
  .finally(async () => {
    for (const server of servers) {
      server.closeAllConnections();
      server.close();
    }
    for (const child of children.reverse()) {
      if (child.exitCode === null && child.signalCode === null) {
        child.kill('SIGTERM');
        await new Promise((resolve) => child.once('exit', resolve));
      }
    }
    fs.rmSync(work, { recursive: true, force: true });
  });
