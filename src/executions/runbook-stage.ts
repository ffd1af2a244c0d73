import type { FastifyBaseLogger } from 'fastify';
import type { Kysely } from 'kysely';
import type { FetchedRunbook, RunbookSource } from '../runbooks/git/sources.js';
import type { Database } from '../store/schema.js';
import type { RunbookRecord } from './repository.js';
import type { RunbookRead } from './runbook-read.js';
import { preparedQuery } from '../store/prepared.js';

/**
 * Reads runbook files of the tenant's own repositories (runbooks/git/, passed in by server/app.ts).
 * Throws an error whose message a person can act on, and that never holds a secret, when it cannot.
 */
export interface RunbookSourceReader {
  read(tenantId: string, source: RunbookSource): Promise<FetchedRunbook>;
  /** Whether an error is one of the reader's own refusals (its message is for people), not a defect. */
  isRefusal(error: unknown): boolean;
}

export interface RunbookStageDeps {
  db: Kysely<Database>;
  ledger: { runbookRead(eventId: string, read: RunbookRead): Promise<string[]> };
  reader: RunbookSourceReader;
  logger: FastifyBaseLogger;
  /** A pass at least this often; a commit that queued such runs wakes it at once. */
  pollMs: number;
  /** Runs by the service released here are the executor's to take. */
  onServiceWork: () => void;
}

/** Events read at once: each is one fetch at most, of one repository. */
const CONCURRENT_READS = 4;
const PER_PASS = 1000;

interface Waiting {
  tenantId: string;
  eventId: string;
  source: RunbookSource;
  byService: boolean;
}

/**
 * The stage between queued and dispatched for runs whose runbook is a file of a git repository
 * (docs/runbooks.md): the file is read fresh for each event, at the commit its ref names then, and
 * the event's runs take that script, its commit and its hash, and are released to their agents (or
 * to the service's executor); a read that fails fails them before anything runs. Any node may
 * read: the ledger applies a read only to runs still waiting, so a second node's read changes nothing.
 */
export class RunbookStage {
  private timer: NodeJS.Timeout | undefined;
  private pass: Promise<void> = Promise.resolve();
  private again = false;
  private stopped = true;
  private readonly reading = new Set<string>();
  private readonly inFlight = new Set<Promise<void>>();

  constructor(private readonly deps: RunbookStageDeps) {}

  start(): void {
    this.stopped = false;
    this.timer = setInterval(() => this.wake(), this.deps.pollMs).unref();
    this.wake();
  }

  /** Looks for waiting runs now, or right after the pass under way. */
  wake(): void {
    if (this.stopped || this.again) return;
    this.again = true;
    this.pass = this.pass.then(async () => {
      this.again = false;
      if (this.stopped) return;
      await this.runOnce().catch((error: unknown) => this.deps.logger.error({ err: error }, 'runbook stage pass failed; next one in a moment'));
    });
  }

  async stop(): Promise<void> {
    this.stopped = true;
    clearInterval(this.timer);
    await this.pass;
    await Promise.all(this.inFlight);
  }

  private async runOnce(): Promise<void> {
    const rows = await awaitingRunbook(this.deps.db);
    const events = new Map<string, Waiting>();
    for (const row of rows) {
      if (this.reading.has(row.event_id)) continue;
      const entry = events.get(row.event_id);
      if (entry) {
        entry.byService ||= row.host_id === null;
        continue;
      }
      const { repositoryId, path, ref } = (JSON.parse(row.spec) as { runbook: RunbookRecord }).runbook;
      const source = { repositoryId: repositoryId!, path: path!, ...(ref === undefined ? {} : { ref }) };
      events.set(row.event_id, { tenantId: row.tenant_id, eventId: row.event_id, source, byService: row.host_id === null });
    }
    for (const waiting of events.values()) {
      while (this.inFlight.size >= CONCURRENT_READS) await Promise.race(this.inFlight);
      if (this.stopped) return;
      this.reading.add(waiting.eventId);
      const read = this.readFor(waiting).finally(() => {
        this.reading.delete(waiting.eventId);
        this.inFlight.delete(read);
      });
      this.inFlight.add(read);
    }
  }

  private async readFor(waiting: Waiting): Promise<void> {
    const read = await this.read(waiting);
    try {
      const changed = await this.deps.ledger.runbookRead(waiting.eventId, read);
      if (changed.length > 0 && waiting.byService && !('failed' in read)) this.deps.onServiceWork();
    } catch (error) {
      this.deps.logger.error({ err: error, eventId: waiting.eventId }, 'a git runbook was read but its runs could not be released; the next pass reads it again');
    }
  }

  private async read({ tenantId, eventId, source }: Waiting): Promise<RunbookRead> {
    try {
      const file = await this.deps.reader.read(tenantId, source);
      return { script: file.script, runbook: { repositoryName: file.repositoryName, ref: file.ref, commit: file.commit, sha256: file.sha256 } };
    } catch (error) {
      const refusal = this.deps.reader.isRefusal(error);
      if (!refusal) this.deps.logger.error({ err: error, eventId }, 'reading a git runbook failed unexpectedly');
      const why = refusal ? (error as Error).message : 'the service failed to read it (see its log)';
      return { failed: `could not read its runbook ${source.path} from its git repository, so nothing ran: ${why}` };
    }
  }
}

/** Read every poll (built once: store/prepared.ts). */
const awaitingRunbook = preparedQuery((db) => db.selectFrom('executions').select(['tenant_id', 'event_id', 'host_id', 'spec'])
  .where('state', '=', 'queued').where('awaiting_runbook', '=', 1).orderBy('id').limit(PER_PASS));
