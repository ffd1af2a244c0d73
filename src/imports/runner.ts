import { randomUUID } from 'node:crypto';
import type { FastifyBaseLogger } from 'fastify';
import type { PolicyFetch } from '../egress/fetch.js';
import { PitcrewError } from '../errors/catalogue.js';
import { masked, secretsOf } from '../identity/audit/mask.js';
import type { SecretBox } from '../identity/secret-box.js';
import { importNeeds } from '../integrations/import-needs.js';
import { advanceImport, dueImports, importSettings, moveImportSchedule } from '../integrations/import-settings.js';
import type { Importer, ImportPage } from '../integrations/observation.js';
import { getIntegration } from '../integrations/repository.js';
import type { IntegrationType } from '../integrations/schema.js';
import type { Store } from '../store/database.js';
import type { ImportRow } from '../store/schema.js';
import { RateLimiter } from './rate-limit.js';
import { openReadSecret } from './read-secret.js';
import { importFetch } from './read-only.js';
import { claimImport, endImport, queuedImports, queueImport, recordPage, releaseImport, requeueOrphans } from './repository.js';
import type { ObservationSink } from './sink.js';

export interface ImportRunnerDeps {
  store: Pick<Store, 'db' | 'dialect'>;
  box: SecretBox;
  /** The service's fetch under the egress policy (egress/fetch.ts). */
  fetch: PolicyFetch;
  importerOf: (type: IntegrationType) => Importer | undefined;
  /** Where observations go, in the page's transaction (incidents' applyObservations). */
  sink: ObservationSink;
  nodeId: string;
  logger: FastifyBaseLogger;
  clock?: () => number;
  /** How often each node looks for due and queued imports (1 s); POST …/import wakes this node at once. */
  pollMs?: number;
  /** Imports this node runs at once at most (4). */
  concurrency?: number;
}

const DAY_MS = 86_400_000;
/** A loop guard, not a quota: an import reads at most this many pages per run, then the next run continues. */
const MAX_PAGES_PER_RUN = 10_000;
const DUE_PER_PASS = 100;

/** Why a run stopped without an end of its own: the service is stopping (it is queued again), or another node holds it now. */
class Stopped extends Error {}

/**
 * Runs imports (docs/incidents-import.md): on every node, each pass queues the imports whose
 * schedule is due (a compare-and-set on `next_at`: one node per due time), queues again those a
 * dead node left running, and claims queued ones (queued → running under a claim token: one node
 * each). A run reads its tool page by page from the integration's cursor (a first run from the
 * look-back); each page's observations are applied and the cursor stored in one transaction,
 * under the claim, so a restart, a crash or a take-over continues where the last commit stopped,
 * with nothing applied twice. Every call to the tool goes through the egress policy, the
 * integration's rate limit and the read-only guard (read-only.ts).
 */
export class ImportRunner {
  private timer: NodeJS.Timeout | undefined;
  private pass: Promise<void> = Promise.resolve();
  private again = false;
  private stopped = true;
  private readonly running = new Map<string, { abort: AbortController; done: Promise<void> }>();
  private readonly clock: () => number;

  constructor(private readonly deps: ImportRunnerDeps) {
    this.clock = deps.clock ?? Date.now;
  }

  start(): void {
    this.stopped = false;
    this.wake();
  }

  /** Stops claiming; runs under way stop between calls and are queued again, to continue from their cursor. */
  async stop(): Promise<void> {
    this.stopped = true;
    clearTimeout(this.timer);
    await this.pass;
    for (const run of this.running.values()) run.abort.abort(new Stopped('the service is stopping'));
    await Promise.all([...this.running.values()].map((run) => run.done));
  }

  /** A pass soon (an import was asked for here). */
  wake(): void {
    if (this.stopped) return;
    clearTimeout(this.timer);
    this.timer = setTimeout(() => this.tick(), 0);
    this.timer.unref();
  }

  /** Queues an import on demand: the one queued or running already when there is one. */
  async request(integration: { id: string; tenant_id: string }): Promise<{ id: string; created: boolean }> {
    const queued = await queueImport(this.deps.store.db, integration, 'manual', this.clock());
    this.wake();
    return queued;
  }

  private tick(): void {
    if (this.stopped) return;
    const previous = this.pass;
    this.pass = previous.then(() => this.runPass()).catch((error: unknown) => {
      this.deps.logger.error({ err: error }, 'import pass failed; next one in a moment');
    }).finally(() => {
      if (!this.stopped) {
        this.timer = setTimeout(() => this.tick(), this.again ? 0 : this.deps.pollMs ?? 1000);
        this.timer.unref();
      }
    });
  }

  /** One pass: orphans queued again, due schedules queued, queued imports claimed and started. Resolves when claimed, not when run. */
  async runPass(now = this.clock()): Promise<void> {
    this.again = false;
    const { db } = this.deps.store;
    const requeued = await requeueOrphans(db, this.deps.nodeId, [...this.running.keys()]);
    if (requeued > 0) this.deps.logger.warn({ requeued }, 'imports left running by a stopped service node queued again; they continue from their cursor');
    for (const due of await dueImports(db, now, DUE_PER_PASS)) {
      if (!(await moveImportSchedule(db, due.integration_id, Number(due.next_at), now + due.interval_seconds * 1000))) continue;
      await queueImport(db, { id: due.integration_id, tenant_id: due.tenant_id }, 'schedule', now);
    }
    const free = (this.deps.concurrency ?? 4) - this.running.size;
    if (free <= 0 || this.stopped) return;
    const queued = await queuedImports(db, free);
    for (const row of queued) {
      const claim = randomUUID();
      if (!(await claimImport(db, row, this.deps.nodeId, claim, now))) continue;
      const abort = new AbortController();
      const done = this.run(row, claim, abort.signal).finally(() => {
        this.running.delete(row.id);
        this.again = true;
        this.wake();
      });
      this.running.set(row.id, { abort, done });
    }
  }

  /** Waits for the runs under way here (tests). */
  async idle(): Promise<void> {
    await this.pass;
    await Promise.all([...this.running.values()].map((run) => run.done));
  }

  private async run(row: ImportRow, claim: string, signal: AbortSignal): Promise<void> {
    const { db } = this.deps.store;
    let imported = row.imported;
    let secrets: string[] = [];
    try {
      const prepared = await this.prepare(row);
      secrets = prepared.secrets;
      const limiter = new RateLimiter(prepared.requestsPerSecond);
      const fetch = importFetch(this.deps.fetch, prepared.needs, limiter);
      let cursor = prepared.cursor;
      for (let pages = 0; pages < MAX_PAGES_PER_RUN; pages++) {
        if (signal.aborted) throw signal.reason as Error;
        const now = this.clock();
        const page = await prepared.importer.importPage({
          config: prepared.config, secret: prepared.secret, cursor, since: now - prepared.lookbackDays * DAY_MS, now, fetch, signal,
        });
        imported += await this.commitPage(row, claim, page, imported, now);
        cursor = page.cursor;
        if (!page.more) break;
      }
      await endImport(db, row, claim, { state: 'succeeded', imported }, this.clock());
      this.deps.logger.info({ importId: row.id, integrationId: row.integration_id, imported }, 'import succeeded');
    } catch (error) {
      if (error instanceof Stopped || (signal.aborted && signal.reason instanceof Stopped)) {
        await releaseImport(db, row, claim).catch((release: unknown) => this.deps.logger.warn({ err: release, importId: row.id }, 'a stopped import could not be queued again; the next pass does it'));
        return;
      }
      const message = masked(this.reason(error, row), secrets) as string;
      await endImport(db, row, claim, { state: 'failed', error: message, imported }, this.clock())
        .catch((end: unknown) => this.deps.logger.error({ err: end, importId: row.id }, 'a failed import could not be recorded; the next pass queues it again'));
    }
  }

  /** The page's observations applied and its cursor stored, in one transaction, under the claim. Resolves with what was added. */
  private async commitPage(row: ImportRow, claim: string, page: ImportPage, before: number, now: number): Promise<number> {
    const added = page.observations.length;
    // A Kysely transaction (not a BEGIN of our own): the sink sees it is in one and begins none (incidents/apply.ts).
    await this.deps.store.db.transaction().execute(async (tx) => {
      if (!(await recordPage(tx, row.id, claim, { cursor: page.cursor, added }))) throw new Stopped('another node holds this import now');
      await this.deps.sink(tx, row.tenant_id, row.integration_id, page.observations, now, page.openKeys ? { openKeys: page.openKeys } : {});
      await advanceImport(tx, row.integration_id, { cursor: page.cursor, added, lastImported: before + added });
    });
    return added;
  }

  /** What a run reads with: the importer, the integration's settings and secret, where the last page stopped. */
  private async prepare(row: ImportRow) {
    const { db } = this.deps.store;
    const integration = await getIntegration(db, row.tenant_id, row.integration_id).catch(() => {
      throw new PitcrewError('PITCREW_ERR_INTEGRATION_NOT_FOUND', 'the integration was deleted; nothing was imported');
    });
    const type = integration.type as IntegrationType;
    const needs = importNeeds(type);
    const importer = this.deps.importerOf(type);
    const settings = await importSettings(db, integration.id);
    if (!needs || !importer || !settings) throw new PitcrewError('PITCREW_ERR_VALIDATION', `pitcrew has no import for ${type} integrations, or this one was not set up (PATCH …/integrations/${integration.id} {import})`);
    const secret = await openReadSecret(db, this.deps.box, integration, settings, needs);
    return {
      // The secret's secret parts (a token; a login's password; a key's secret half), for masking in what is shown.
      needs, importer, secret, secrets: typeof secret === 'string' ? [secret] : secretsOf(secret),
      config: JSON.parse(integration.config) as Record<string, unknown>,
      cursor: settings.cursor,
      lookbackDays: settings.lookback_days,
      requestsPerSecond: Number(settings.requests_per_second),
    };
  }

  /** The failure as people read it: the tool's words (a PitcrewError: ToolImportError, a setting), else a plain line (the error itself is logged). */
  private reason(error: unknown, row: ImportRow): string {
    // An importer's own words: a ToolImportError (the tool refused, or did not answer), or a setting it lacks.
    if (error instanceof PitcrewError) return error.message;
    this.deps.logger.error({ err: error, importId: row.id, integrationId: row.integration_id }, 'import failed');
    return 'the import failed on an error of the service (logged); the next import continues from where this one stopped';
  }
}

