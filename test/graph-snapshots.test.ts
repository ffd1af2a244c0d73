import fs from 'node:fs';
import http from 'node:http';
import type { AddressInfo } from 'node:net';
import os from 'node:os';
import path from 'node:path';
import { PNG } from 'pngjs';
import { afterAll, beforeAll, describe, expect, it, onTestFailed } from 'vitest';
import { loadSecretKey, SecretBox } from '../src/identity/secret-box.js';
import { SNAPSHOT_HEIGHT } from '../src/actions/snapshot/runner.js';
import { plotArea, SERIES_COLOURS, THRESHOLD_COLOUR } from '../src/snapshots/chart.js';
import { linkQuery, SIGNED_LINK_PURPOSE } from '../src/snapshots/signed-link.js';
import { createTestDatabase, testDialects, type TestDatabase } from './support/databases.js';
import { alertingTo, assertToolsInstalled, PROMETHEUS, startAlertmanager, startServing, type ToolProcess } from './support/prometheus.js';
import { freePort } from './support/process.js';
import { startTestEnv, type TestEnv } from './support/app.js';
import { waitFor } from './support/wait.js';
import { createChannel, finish, waitDelivered } from './support/notify.js';
import { startReceiver } from './support/receivers.js';
import { startSmtpServer, type SmtpTestServer } from './support/smtp.js';

/*
 * Issue 39 with the real tools: Debian's Prometheus scrapes a real series (a gauge served here,
 * rising past 20 for one instance), evaluates `pitcrew_snapshot_load > 20`, real Alertmanager posts
 * the alert to the integration, and the rule's graph_snapshot reads the expression from the alert's
 * generatorURL, asks Prometheus's query_range (the integration's prometheusUrl) and stores the
 * picture: fetched by the API with a token and by a signed link without one, refused once the link
 * has expired, and carried inline by the capture's e-mail notification (the project's SMTP test
 * server), the whole of issue 39's "Done when" in one test. Then the failures, each with an alert posted as Alertmanager posts it (webhook
 * version 4, https://prometheus.io/docs/alerting/latest/configuration/#webhook_config): Prometheus
 * unreachable, a query it refuses, a query without data; each reason names the tool, the query and
 * what it answered.
 */
const STEP_MS = 60_000;
const ALERT = 'PitcrewSnapshotLoad';
const METRIC = 'pitcrew_snapshot_load';
const PUBLIC_URL = 'https://pitcrew.example.test';

interface Execution { id: string; state: string; reason: string | null; snapshots?: Array<{ id: string; contentType: string; width: number; height: number; bytes: number; url: string; title: string }> }

describe.each(testDialects())('graph snapshots from a real Prometheus on %s', (dialect) => {
  let database: TestDatabase;
  let env: TestEnv;
  let work: string;
  let metrics: http.Server;
  const tools: Record<string, ToolProcess> = {};
  let prometheusUrl: string;
  let integrationId: string;
  let linkKey: Buffer;
  let smtp: SmtpTestServer;
  let mailChannelId: string;

  beforeAll(async () => {
    assertToolsInstalled();
    work = fs.mkdtempSync(path.join(os.tmpdir(), 'pitcrew-snapshots-'));
    database = await createTestDatabase(dialect);
    env = await startTestEnv(dialect, { database, listen: true, publicUrl: PUBLIC_URL });
    await env.enrol('web-1');
    linkKey = new SecretBox(loadSecretKey(database.dataDir, undefined).key).derivedKey(SIGNED_LINK_PURPOSE);

    // The series: web-1 rises a unit a second from 0 (the alert fires after 20 s of it), web-2 stays at 1.
    let firstScrape: number | undefined;
    metrics = http.createServer((_request, response) => {
      firstScrape ??= Date.now();
      const rising = (Date.now() - firstScrape) / 1000;
      response.setHeader('content-type', 'text/plain; version=0.0.4');
      response.end(`# TYPE ${METRIC} gauge\n${METRIC}{instance="web-1:9100"} ${rising}\n${METRIC}{instance="web-2:9100"} 1\n`);
    });
    await new Promise<void>((resolve) => metrics.listen(0, '127.0.0.1', resolve));
    const target = `127.0.0.1:${(metrics.address() as AddressInfo).port}`;

    // The integration first, for Alertmanager's webhook URL; Prometheus's address is set on it once Prometheus serves.
    const made = await env.api('POST', '/api/v1/integrations', { name: 'prometheus', type: 'alertmanager', config: {} });
    expect(made.statusCode, made.body).toBe(201);
    integrationId = made.json().id as string;
    const alertmanager = await startAlertmanager(work, `${env.listening!.httpUrl}/api/v1/trigger/channel/alertmanager/${env.tenant.apiKey}/${integrationId}`, { repeatInterval: '1h' });
    tools.alertmanager = alertmanager.tool;
    fs.writeFileSync(path.join(work, 'rules.yml'), `groups:
  - name: pitcrew-snapshots
    interval: 1s
    rules:
      - alert: ${ALERT}
        expr: ${METRIC} > 20
        for: 0s
        labels:
          severity: critical
`);
    fs.writeFileSync(path.join(work, 'prometheus.yml'), `global:
  scrape_interval: 1s
  evaluation_interval: 1s
scrape_configs:
  - job_name: load
    honor_labels: true
    static_configs:
      - targets: ['${target}']
rule_files:
  - ${JSON.stringify(path.join(work, 'rules.yml'))}
${alertingTo(alertmanager.url)}`);
    const prometheus = await startServing(PROMETHEUS, (port) => [
      `--config.file=${path.join(work, 'prometheus.yml')}`, `--storage.tsdb.path=${path.join(work, 'prometheus-data')}`,
      `--web.listen-address=127.0.0.1:${port}`,
    ]);
    tools.prometheus = prometheus.tool;
    prometheusUrl = prometheus.url;
    const configured = await env.api('PATCH', `/api/v1/integrations/${integrationId}`, { config: { prometheusUrl } });
    expect(configured.statusCode, configured.body).toBe(200);
    const loadRule = await rule('load', { type: 'alert', integrationId, alarmName: ALERT }, { type: 'graph_snapshot', windowMinutes: 1 });
    // The project's SMTP test server, told of the rule's capture: the real alert's picture goes inline.
    smtp = await startSmtpServer();
    mailChannelId = (await createChannel(env, {
      name: 'load graphs by mail', type: 'email', ruleIds: [loadRule],
      config: { host: smtp.host, port: smtp.port, secure: false, username: smtp.username, password: smtp.password, from: 'pitcrew@example.com', to: ['team@example.com'], ca: smtp.cert },
    })).id;

    // The series is in Prometheus before any capture asks for it.
    await waitFor(async () => {
      const answer = await fetch(`${prometheusUrl}/api/v1/query?query=${METRIC}`).then((r) => r.json() as Promise<{ data?: { result?: unknown[] } }>).catch(() => undefined);
      return (answer?.data?.result?.length ?? 0) > 0;
    }, 'Prometheus scraped the series', STEP_MS);
  }, 3 * STEP_MS);

  afterAll(async () => {
    await Promise.all(Object.values(tools).map((tool) => tool.kill()));
    metrics?.close();
    await env?.close();
    await database?.drop();
    if (work) fs.rmSync(work, { recursive: true, force: true });
  });

  const toolLogs = () => Object.entries(tools).map(([name, tool]) => `--- ${name} ---\n${tool.output().slice(-3000)}`).join('\n');

  async function rule(name: string, trigger: Record<string, unknown>, action: Record<string, unknown>): Promise<string> {
    const created = await env.api('POST', '/api/v1/rules', { name, trigger, action, target: { type: 'trigger_host' }, infrastructureType: 'On_Premise' });
    expect(created.statusCode, created.body).toBe(201);
    return created.json().id as string;
  }

  /** The rule's first execution once it ended. */
  async function ended(ruleId: string): Promise<Execution> {
    onTestFailed(() => console.log(toolLogs(), env.logs.slice(-30).join('\n')));
    let done: Execution | undefined;
    await waitFor(async () => {
      const items = (await env.api('GET', `/api/v1/executions?ruleId=${ruleId}`)).json().items as Execution[];
      done = items.find((e) => !['queued', 'dispatched', 'running'].includes(e.state));
      return done !== undefined;
    }, `rule ${ruleId}'s execution ended`, 2 * STEP_MS);
    return (await env.api('GET', `/api/v1/executions/${done!.id}`)).json() as Execution;
  }

  /** An alert as Alertmanager posts it, to the integration's URL. */
  async function postAlert(to: string, alertname: string, generatorURL: string): Promise<void> {
    const startsAt = new Date(Date.now() - 30_000).toISOString();
    const labels = { alertname, instance: 'web-1:9100', severity: 'critical' };
    const body = {
      version: '4', groupKey: `{}:{alertname="${alertname}"}`, truncatedAlerts: 0, status: 'firing', receiver: 'pitcrew',
      groupLabels: { alertname }, commonLabels: labels, commonAnnotations: {}, externalURL: 'http://alertmanager:9093',
      alerts: [{ status: 'firing', labels, annotations: {}, startsAt, endsAt: '0001-01-01T00:00:00Z', generatorURL, fingerprint: `f${alertname.length.toString(16)}0a1b2c3d4e5f6` }],
    };
    const posted = await env.app.server.inject({ method: 'POST', url: `/api/v1/trigger/channel/alertmanager/${env.tenant.apiKey}/${to}`, payload: body });
    expect(posted.statusCode, `${posted.body}\n${env.logs.filter((line) => line.includes("\"level\":50")).slice(-3).join("\n")}`).toBe(202);
  }

  it('captures the alerting series when the real alert arrives: a PNG with the series and the threshold, by token and by signed link, inline in the capture’s e-mail', async () => {
    const ruleId = (await env.api('GET', '/api/v1/rules')).json().items.find((r: { name: string }) => r.name === 'load').id as string;
    const execution = await ended(ruleId);
    expect(execution.state, execution.reason ?? '').toBe('succeeded');
    expect(execution.reason).toContain(`captured a graph from Prometheus: ${ALERT}: ${METRIC}`);
    expect(execution.snapshots).toHaveLength(1);
    const snapshot = execution.snapshots![0]!;
    expect(snapshot).toMatchObject({ contentType: 'image/png', width: 720, height: 318, url: `/api/v1/snapshots/${snapshot.id}` });

    const image = await env.api('GET', snapshot.url);
    expect(image.statusCode).toBe(200);
    expect(image.headers['content-type']).toBe('image/png');
    expect(image.rawPayload.byteLength).toBe(snapshot.bytes);
    if (process.env.SNAPSHOT_E2E_OUT) fs.writeFileSync(process.env.SNAPSHOT_E2E_OUT, image.rawPayload);
    const png = PNG.sync.read(image.rawPayload);
    expect([png.width, png.height]).toEqual([720, 318]);
    // web-1's line only: the alert's own series (web-2 is drawn in no colour of its own).
    expect(colourCount(png, SERIES_COLOURS[0])).toBeGreaterThan(100);
    expect(colourCount(png, SERIES_COLOURS[1])).toBe(0);
    expect(colourCount(png, THRESHOLD_COLOUR)).toBeGreaterThan(20);

    const subject = { tenantId: env.tenant.tenantId, snapshotId: snapshot.id };
    const open = await env.app.server.inject({ method: 'GET', url: `${snapshot.url}?${linkQuery(linkKey, subject, Math.floor(Date.now() / 1000) + 600)}` });
    expect(open.statusCode).toBe(200);
    expect(Buffer.compare(open.rawPayload, image.rawPayload)).toBe(0);

    const expired = await env.app.server.inject({ method: 'GET', url: `${snapshot.url}?${linkQuery(linkKey, subject, Math.floor(Date.now() / 1000) - 1)}` });
    expect(expired.statusCode).toBe(403);
    expect(expired.json()).toMatchObject({ code: 'PITCREW_ERR_LINK_INVALID', detail: expect.stringContaining('expired') });
    const otherId = '0190a7f4-0000-7000-8000-000000000000';
    const forOther = linkQuery(linkKey, { ...subject, snapshotId: otherId }, Math.floor(Date.now() / 1000) + 600);
    expect((await env.app.server.inject({ method: 'GET', url: `${snapshot.url}?${forOther}` })).statusCode).toBe(403);
    expect((await env.app.server.inject({ method: 'GET', url: snapshot.url })).statusCode).toBe(401);

    // A link made on demand (the UI's Copy link): under the public URL, open the days asked, for this tenant's snapshot only.
    const made = await env.api('POST', `${snapshot.url}/link`, { days: 2 });
    expect(made.statusCode, made.body).toBe(200);
    const shared = new URL(made.json().signedUrl as string);
    expect(`${shared.origin}${shared.pathname}`).toBe(`${PUBLIC_URL}${snapshot.url}`);
    expect(Number(shared.searchParams.get('exp')) * 1000).toBe(Date.parse(made.json().expiresAt as string));
    expect((Date.parse(made.json().expiresAt as string) - Date.now()) / 86_400_000).toBeGreaterThan(1.99);
    const opened = await env.app.server.inject({ method: 'GET', url: `${shared.pathname}${shared.search}` });
    expect(opened.statusCode).toBe(200);
    expect(Buffer.compare(opened.rawPayload, image.rawPayload)).toBe(0);
    const other = await env.addTenant(`other ${dialect}`);
    const refused = await env.api('POST', `${snapshot.url}/link`, {}, other.token);
    expect(refused.statusCode).toBe(404);
    expect(refused.headers['content-type']).toContain('application/problem+json');
    expect((await env.api('POST', `${snapshot.url}/link`, { days: 400 })).statusCode).toBe(400);

    // The capture's e-mail notification carries the same PNG inline, by its cid (Alertmanager may
    // send the alert again, each delivery its own capture and mail: this capture's is looked for).
    const cid = `snapshot-${snapshot.id}@pitcrew`;
    await waitDelivered(env, mailChannelId);
    const sent = await waitFor(() => smtp.mails.find((m) => m.parts.some((part) => part.contentId === cid)), 'the capture’s mail', STEP_MS);
    expect(sent.subject).toMatch(/^\[pitcrew\] load succeeded/);
    const pictures = sent.parts.filter((part) => part.contentType === 'image/png');
    expect(pictures.map((part) => [part.contentId, part.disposition])).toEqual([[cid, 'inline']]);
    expect(Buffer.compare(pictures[0]!.body, image.rawPayload)).toBe(0);
    expect(sent.html).toContain(`<img src="cid:${cid}" width="720" height="318"`);
  }, 3 * STEP_MS);

  it('captures graphs too beside a fix: a graph_snapshot execution of the same event, whose snapshots the fix lists while it waits for its agent', async () => {
    const ruleId = await rule('fix with graphs', { type: 'alert', integrationId, alarmName: 'FixWithGraphs' }, {
      type: 'script', flavour: 'autofix', runbook: { script: 'true' }, snapshot: { graphs: [`${METRIC}{instance="{{ $labels.instance }}"}`], windowMinutes: 1 },
    });
    await postAlert(integrationId, 'FixWithGraphs', '');
    const capture = await ended(ruleId);
    expect(capture.state, capture.reason ?? '').toBe('succeeded');
    expect(capture.reason).toBe(`captured a graph from Prometheus: ${METRIC}{instance="web-1:9100"}`);
    const executions = (await env.api('GET', `/api/v1/executions?ruleId=${ruleId}`)).json().items as Array<Execution & { actionType: string; eventId: string }>;
    const fix = executions.find((e) => e.actionType === 'script')!;
    // No agent is connected: the fix waits, the capture did not.
    expect(fix.state).toBe('queued');
    expect(executions.find((e) => e.actionType === 'graph_snapshot')?.eventId).toBe(fix.eventId);
    const fixView = (await env.api('GET', `/api/v1/executions/${fix.id}`)).json() as Execution;
    expect(fixView.snapshots?.map((one) => one.id)).toEqual(capture.snapshots!.map((one) => one.id));
  }, 3 * STEP_MS);

  it('tells the fix’s result with its graph: the PNG inline in the e-mail by its cid, and a signed link in Slack that opens it without a session', async () => {
    const smtp = await startSmtpServer();
    const slack = await startReceiver();
    const ruleId = await rule('fix told with graphs', { type: 'alert', integrationId, alarmName: 'ToldWithGraphs' }, {
      type: 'script', flavour: 'autofix', runbook: { script: 'true' }, snapshot: { graphs: [`${METRIC}{instance="{{ $labels.instance }}"}`], windowMinutes: 1 },
    });
    const mail = await createChannel(env, {
      name: 'graphs by mail', type: 'email', ruleIds: [ruleId],
      config: { host: smtp.host, port: smtp.port, secure: false, username: smtp.username, password: smtp.password, from: 'pitcrew@example.com', to: ['team@example.com'], ca: smtp.cert },
    });
    const chat = await createChannel(env, { name: 'graphs in slack', type: 'slack', ruleIds: [ruleId], config: { webhookUrl: slack.url } });
    await postAlert(integrationId, 'ToldWithGraphs', '');
    // The capture ends first (the fix waits for its agent): its picture is ready when the fix's message is built.
    const capture = await ended(ruleId);
    expect(capture.state, capture.reason ?? '').toBe('succeeded');
    const snapshot = capture.snapshots![0]!;
    const image = (await env.api('GET', snapshot.url)).rawPayload;
    const fix = await env.store.db.selectFrom('executions').select(['id', 'host_id', 'event_id']).where('rule_id', '=', ruleId).where('companion', '=', 0).executeTakeFirstOrThrow();
    await finish(env, fix.id, fix.host_id!, { exitCode: 0, stdout: 'restarted' });
    await waitDelivered(env, mail.id);
    await waitDelivered(env, chat.id);

    // One message told both: the capture's pending row went with the fix's.
    expect(await env.store.db.selectFrom('notify_pending').select('execution_id').where('event_id', '=', fix.event_id).execute()).toEqual([]);
    const sent = smtp.mails.find((m) => m.subject.includes('fix told with graphs'))!;
    expect(sent.subject).toBe('[pitcrew] fix told with graphs succeeded on web-1');
    const cid = `snapshot-${snapshot.id}@pitcrew`;
    const pictures = sent.parts.filter((part) => part.contentType === 'image/png');
    expect(pictures.map((part) => [part.contentId, part.disposition])).toEqual([[cid, 'inline']]);
    expect(Buffer.compare(pictures[0]!.body, image)).toBe(0);
    const png = PNG.sync.read(pictures[0]!.body);
    expect([png.width, png.height]).toEqual([snapshot.width, snapshot.height]);
    expect(sent.html).toContain(`<img src="cid:${cid}" width="${snapshot.width}" height="${snapshot.height}"`);

    const blocks = (slack.accepted()[0]!.body as { blocks: Array<{ type: string; elements?: Array<{ text: { text: string }; url: string }> }> }).blocks;
    const button = blocks.find((block) => block.type === 'actions')!.elements!.find((element) => element.text.text.startsWith('📈'))!;
    expect(button.text.text).toBe(`📈 ${snapshot.title}`);
    const link = new URL(button.url);
    expect(`${link.origin}${link.pathname}`).toBe(`${PUBLIC_URL}/api/v1/snapshots/${snapshot.id}`);
    const days = (Number(link.searchParams.get('exp')) * 1000 - Date.now()) / 86_400_000;
    expect(days).toBeGreaterThan(6.99);
    expect(days).toBeLessThanOrEqual(7);
    const open = await env.app.server.inject({ method: 'GET', url: `${link.pathname}${link.search}` });
    expect(open.statusCode).toBe(200);
    expect(Buffer.compare(open.rawPayload, image)).toBe(0);
    const sig = link.searchParams.get('sig')!;
    const altered = `${sig.slice(0, -1)}${sig.endsWith('A') ? 'B' : 'A'}`;
    const tries = [
      `${link.pathname}?exp=${link.searchParams.get('exp')}&sig=${altered}`,
      `${link.pathname}?exp=${Number(link.searchParams.get('exp')) + 1}&sig=${sig}`,
      `/api/v1/snapshots/${capture.snapshots![0]!.id.replace(/.$/, (c) => (c === '0' ? '1' : '0'))}${link.search}`,
    ];
    for (const url of tries) expect((await env.app.server.inject({ method: 'GET', url })).statusCode, url).toBe(403);
    // Nothing else opens with it.
    expect((await env.app.server.inject({ method: 'GET', url: `/api/v1/executions/${fix.id}${link.search}` })).statusCode).toBe(401);
  }, 3 * STEP_MS);

  it('previews for the wizard: the last hour drawn now and returned as data, nothing stored; a refused query is a problem naming the tool, query and answer', async () => {
    const before = await env.store.db.selectFrom('graph_snapshots').select('id').execute();
    const preview = await env.api('POST', '/api/v1/snapshots/preview', { integrationId, graphs: [METRIC] });
    expect(preview.statusCode, preview.body).toBe(200);
    const [image] = preview.json().images as Array<{ title: string; contentType: string; width: number; height: number; bytes: number; dataUrl: string }>;
    expect(image).toMatchObject({ title: METRIC, contentType: 'image/png', width: 720 });
    const png = PNG.sync.read(Buffer.from(image!.dataUrl.replace(/^data:image\/png;base64,/, ''), 'base64'));
    expect([png.width, png.height]).toEqual([image!.width, image!.height]);
    // The rising instance drawn, at the hour's right end (the series is younger than the window).
    expect(colourCount(png, SERIES_COLOURS[0])).toBeGreaterThan(0);
    expect(await env.store.db.selectFrom('graph_snapshots').select('id').execute()).toEqual(before);

    const refused = await env.api('POST', '/api/v1/snapshots/preview', { integrationId, graphs: ['rate(' + METRIC] });
    expect(refused.statusCode).toBe(502);
    expect(refused.headers['content-type']).toContain('application/problem+json');
    expect(refused.json()).toMatchObject({ code: 'PITCREW_ERR_TOOL_REFUSED', detail: expect.stringMatching(new RegExp(`^Prometheus refused query_range of rate\\(${METRIC} at .*HTTP 400: .*parse error`)) });
    const unknown = await env.api('POST', '/api/v1/snapshots/preview', { integrationId: '0190a7f4-0000-7000-8000-000000000000' });
    expect(unknown.statusCode).toBe(404);
    expect(unknown.json().detail).toContain('does not exist in this tenant');
  }, 3 * STEP_MS);

  it('fails naming Prometheus, the query and the refused connection when Prometheus is unreachable', async () => {
    const closed = `http://127.0.0.1:${await freePort()}`;
    const unreachable = (await env.api('POST', '/api/v1/integrations', { name: 'gone', type: 'alertmanager', config: { prometheusUrl: closed } })).json().id as string;
    const ruleId = await rule('unreachable', { type: 'alert', integrationId: unreachable }, { type: 'graph_snapshot' });
    await postAlert(unreachable, 'Unreachable', `http://prometheus:9090/graph?g0.expr=${encodeURIComponent(`${METRIC} > 3`)}&g0.tab=1`);
    const execution = await ended(ruleId);
    expect(execution.state).toBe('failed');
    expect(execution.reason).toMatch(new RegExp(`^Prometheus did not answer query_range of ${METRIC} at ${closed}/api/v1/query_range: .*ECONNREFUSED`));
  }, 3 * STEP_MS);

  it('fails with what Prometheus answered when it refuses the query', async () => {
    const ruleId = await rule('invalid', { type: 'alert', integrationId, alarmName: 'Invalid' }, { type: 'graph_snapshot', graphs: [`rate(${METRIC}{instance="{{ $labels.instance }}"}[1m]`] });
    await postAlert(integrationId, 'Invalid', '');
    const execution = await ended(ruleId);
    expect(execution.state).toBe('failed');
    expect(execution.reason).toMatch(/^Prometheus refused query_range of rate\(pitcrew_snapshot_load\{instance="web-1:9100"\}\[1m\] at http:\/\/127\.0\.0\.1:\d+\/api\/v1\/query_range: HTTP 400: .*parse error/);
  }, 3 * STEP_MS);

  it('fails saying so when the query has no data in the window', async () => {
    const ruleId = await rule('no data', { type: 'alert', integrationId, alarmName: 'NoData' }, { type: 'graph_snapshot', graphs: ['pitcrew_no_such_series > 1'] });
    await postAlert(integrationId, 'NoData', '');
    const execution = await ended(ruleId);
    expect(execution.state).toBe('failed');
    expect(execution.reason).toMatch(/^Prometheus refused query_range of pitcrew_no_such_series at .*: no data between \S+ and \S+: the query matched no series in the window$/);
    expect(execution.snapshots).toEqual([]);
  }, 3 * STEP_MS);
});

/** Pixels of the colour in the plot (the legend's swatches, below it, are not counted). */
function colourCount(png: PNG, hex: string): number {
  const [r, g, b] = [1, 3, 5].map((at) => Number.parseInt(hex.slice(at, at + 2), 16));
  const { top, bottom } = plotArea(SNAPSHOT_HEIGHT);
  let count = 0;
  for (let i = top * png.width * 4; i < bottom * png.width * 4; i += 4) {
    if (Math.abs(png.data[i]! - r!) < 12 && Math.abs(png.data[i + 1]! - g!) < 12 && Math.abs(png.data[i + 2]! - b!) < 12) count += 1;
  }
  return count;
}
