import type { FastifyBaseLogger } from 'fastify';
import type { Kysely } from 'kysely';
import type { PolicyFetch } from '../../egress/fetch.js';
import { PitcrewError } from '../../errors/catalogue.js';
import type { Admission, RunEnd, ServiceRunner } from '../../executions/service-executor.js';
import { masked, secretsOf } from '../../identity/audit/mask.js';
import type { SecretBox } from '../../identity/secret-box.js';
import { openReadSecret } from '../../imports/read-secret.js';
import { openGraphSecret } from '../../integrations/graph-secret.js';
import type { Graph, GraphSource } from '../../integrations/graph-source.js';
import { importNeeds } from '../../integrations/import-needs.js';
import { importSettings } from '../../integrations/import-settings.js';
import { getIntegration } from '../../integrations/repository.js';
import type { IntegrationType } from '../../integrations/schema.js';
import type { CapturedImage, SnapshotPreviewRequest } from '../../snapshots/preview.js';
import type { RenderPool } from '../../snapshots/render-pool.js';
import { insertSnapshots, MAX_SNAPSHOT_BYTES, type NewSnapshot } from '../../snapshots/repository.js';
import type { Database, ExecutionRow } from '../../store/schema.js';
import { isGraphSnapshotSpec, type GraphSnapshotSpec } from './kind.js';

/** The picture's size: readable in an e-mail (600-800 px wide), the plot above a line of legend per series. */
export const SNAPSHOT_WIDTH = 720;
export const SNAPSHOT_HEIGHT = 300;

type CaptureSpec = Pick<GraphSnapshotSpec, 'integrationId' | 'graphs' | 'alert'>;

export interface SnapshotRunnerDeps {
  db: Kysely<Database>;
  box: SecretBox;
  /** The service's fetch under the egress policy: every call to the tenant's tool goes through it. */
  fetch: PolicyFetch;
  sources: (type: IntegrationType) => GraphSource | undefined;
  /** Draws the numbers a tool answers, in worker threads off the event loop. */
  render: RenderPool;
  logger: Pick<FastifyBaseLogger, 'warn'>;
  clock?: () => number;
}

/**
 * Runs graph_snapshot executions in this process (executions/service-executor.ts): the
 * integration's tool read with its read-only credential through its graph source, numbers drawn
 * (snapshots/render-pool.ts), images stored with the execution. A failure names the tool, the query and
 * what the tool answered, with the credential blotted out. At most as many captures run at once as
 * the renderer takes pictures (its threads and its queue): the others wait queued.
 */
export class SnapshotRunner implements Extract<ServiceRunner, { mode: 'in_process' }> {
  readonly kind = 'graph_snapshot';
  readonly mode = 'in_process';
  private readonly clock: () => number;
  private capturing = 0;

  constructor(private readonly deps: SnapshotRunnerDeps) {
    this.clock = deps.clock ?? Date.now;
  }

  admit(): Admission {
    if (this.capturing >= this.deps.render.capacity) return undefined;
    this.capturing += 1;
    let released = false;
    return () => {
      if (released) return;
      released = true;
      this.capturing -= 1;
    };
  }

  close(): void {
    void this.deps.render.close();
  }

  async run(execution: ExecutionRow, signal: AbortSignal): Promise<RunEnd> {
    const spec = JSON.parse(execution.spec) as unknown;
    if (!isGraphSnapshotSpec(spec)) return { state: 'failed', reason: 'not a graph_snapshot execution' };
    try {
      const window = this.window(spec);
      const { tool, images } = await this.capture(execution.tenant_id, spec, window, signal);
      const stored = await this.store(execution, images);
      return { state: 'succeeded', reason: `captured ${stored.length === 1 ? 'a graph' : `${stored.length} graphs`} from ${tool}: ${stored.map((s) => s.title).join('; ')}` };
    } catch (error) {
      if (signal.aborted) throw error;
      const reason = error instanceof Error ? error.message : String(error);
      this.deps.logger.warn({ executionId: execution.id, ruleId: execution.rule_id, integrationId: spec.integrationId, reason }, 'graph snapshot failed');
      return { state: 'failed', reason };
    }
  }

  /**
   * The wizard's Preview (snapshots/routes.ts): the graphs a rule would capture, over the last
   * `windowMinutes` up to now, drawn and returned, never stored. A failure throws, its message as a
   * failed execution's reason.
   */
  async preview(tenantId: string, request: SnapshotPreviewRequest, signal: AbortSignal): Promise<CapturedImage[]> {
    // A place among the captures, so that a burst of Previews is refused here instead of filling the
    // renderer's queue under a capture already admitted (which would then fail with the queue full).
    const release = this.admit();
    if (!release) {
      throw new PitcrewError('PITCREW_ERR_THROTTLED', `the chart renderer is busy: ${this.capturing} captures and previews are drawing or waiting for it (PITCREW_SNAPSHOT_RENDER_WORKERS, PITCREW_SNAPSHOT_RENDER_QUEUE); try the preview again in a moment`);
    }
    try {
      const to = this.clock();
      const from = to - request.windowMinutes * 60_000;
      const alert = { alarmName: 'preview', hostname: undefined, labels: {}, generatorURL: undefined, startedAt: to, payload: {} };
      const spec = { integrationId: request.integrationId, graphs: request.graphs, alert };
      return (await this.capture(tenantId, spec, { from, to }, signal)).images;
    } finally {
      release();
    }
  }

  /** The graphs read from the tool and drawn; the error's message has the credential blotted out. */
  private async capture(tenantId: string, spec: CaptureSpec, window: { from: number; to: number }, signal: AbortSignal): Promise<{ tool: string; images: CapturedImage[] }> {
    let secrets: string[] = [];
    try {
      const { source, config, secret } = await this.prepare(tenantId, spec.integrationId);
      secrets = typeof secret === 'string' ? [secret] : secretsOf(secret);
      const graphs = await source.capture({ config, secret, graphs: spec.graphs, alert: spec.alert, ...window, width: SNAPSHOT_WIDTH, height: SNAPSHOT_HEIGHT, fetch: this.deps.fetch, signal });
      const images: CapturedImage[] = [];
      for (const graph of graphs) images.push(await this.draw(graph, window, spec.alert.startedAt, signal));
      return { tool: source.tool, images };
    } catch (error) {
      if (signal.aborted) throw error;
      const detail = masked(error instanceof Error ? error.message : String(error), secrets) as string;
      throw new PitcrewError(error instanceof PitcrewError ? error.code : 'PITCREW_ERR_TOOL_REFUSED', detail);
    }
  }

  private async draw(graph: Graph, window: { from: number; to: number }, startedAt: number, signal: AbortSignal): Promise<CapturedImage> {
    const image = graph.kind === 'image'
      ? { contentType: graph.contentType, bytes: graph.bytes, width: graph.width, height: graph.height }
      : await this.deps.render.renderPng({ title: graph.title, series: graph.series, threshold: graph.threshold, unit: graph.unit, ...window, startedAt, width: SNAPSHOT_WIDTH, height: SNAPSHOT_HEIGHT }, signal);
    if (image.bytes.byteLength > MAX_SNAPSHOT_BYTES) {
      throw new PitcrewError('PITCREW_ERR_VALIDATION', `the graph "${graph.title}" is ${image.bytes.byteLength} bytes, over the ${MAX_SNAPSHOT_BYTES} a snapshot may keep: nothing was stored`);
    }
    return { title: graph.title, query: graph.query, ...image };
  }

  private async prepare(tenantId: string, integrationId: string | null): Promise<{ source: GraphSource; config: Record<string, unknown>; secret: unknown }> {
    const { db, box } = this.deps;
    if (!integrationId) throw new PitcrewError('PITCREW_ERR_VALIDATION', 'the action names no integration to read graphs from: set action.integrationId (the rule has no alert trigger to take it from)');
    const integration = await getIntegration(db, tenantId, integrationId).catch(() => {
      throw new PitcrewError('PITCREW_ERR_INTEGRATION_NOT_FOUND', `the integration ${integrationId} does not exist in this tenant (deleted?): no graph was read`);
    });
    const type = integration.type as IntegrationType;
    const source = this.deps.sources(type);
    if (!source) throw new PitcrewError('PITCREW_ERR_VALIDATION', `pitcrew reads no graphs from ${type} integrations (docs/graph-snapshots.md lists the tools)`);
    const secret = openGraphSecret(box, integration) ?? await openReadSecret(db, box, integration, await importSettings(db, integration.id), importNeeds(type));
    return { source, config: JSON.parse(integration.config) as Record<string, unknown>, secret };
  }

  /** Before the alert's start and after it, up to now; a minute at least. */
  private window(spec: GraphSnapshotSpec): { from: number; to: number } {
    const span = spec.windowMinutes * 60_000;
    const from = spec.alert.startedAt - span;
    const to = Math.max(Math.min(this.clock(), spec.alert.startedAt + span), from + 60_000);
    return { from, to };
  }

  private async store(execution: ExecutionRow, images: CapturedImage[]): Promise<NewSnapshot[]> {
    const snapshots = images.map((image, position): NewSnapshot => ({
      tenantId: execution.tenant_id, executionId: execution.id, eventId: execution.event_id, position,
      title: image.title, query: image.query, contentType: image.contentType, width: image.width, height: image.height, image: image.bytes,
    }));
    await insertSnapshots(this.deps.db, snapshots, this.clock());
    return snapshots;
  }
}
