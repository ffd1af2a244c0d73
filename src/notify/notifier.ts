import type { FastifyBaseLogger } from 'fastify';
import type { NotifySettings } from '../config/config.js';
import type { LedgerOutbox } from '../executions/ledger.js';
import type { Store } from '../store/database.js';
import type { NotifyChannelRow } from '../store/schema.js';
import { Statements } from '../store/statements.js';
import type { EgressPolicy } from '../egress/policy.js';
import { escalateOwed, escalateUndecided } from './approval-escalation.js';
import { askForApprovals, type ApprovalAsking } from './approval-request.js';
import { APPROVAL_LINK_PURPOSE } from '../executions/approval-link.js';
import { recordAttempt } from './attempts.js';
import { openChannel } from './channels.js';
import { pendingWrites, RunCollector } from './collector.js';
import type { DescribeAction } from './run-notification.js';
import { Deliverer } from './deliverer.js';
import { escalate, type Escalation } from './escalate.js';
import type { UiLinks } from './links.js';
import { digest } from './messages/digest.js';
import { tellNotRun } from './not-run.js';
import type { TestNotification } from './notification.js';
import type { SecretBox } from '../identity/secret-box.js';
import { sendNotification, type SendResult } from './senders/index.js';
import { queueOutcomeUpdates } from './slack/outcome-updates.js';
import { SIGNED_LINK_PURPOSE } from '../snapshots/signed-link.js';
import type { BotConnector } from './teams/connector.js';

export interface NotifierDeps {
  store: Store;
  box: SecretBox;
  /** Where deliveries may connect: the service's one egress policy. */
  egress: EgressPolicy;
  links: UiLinks;
  logger: FastifyBaseLogger;
  nodeId: string;
  settings: NotifySettings;
  /** An execution's spec in words (actions/kinds.ts), for run notifications. */
  describeAction: DescribeAction;
  /** The Bot Connector, for Teams channels with a bot (teams/connector.ts). */
  teams?: BotConnector;
  /** Other duties of the notifier's loop (escalations to send). */
  duties?: Array<() => Promise<unknown>>;
}

const SEND_CONCURRENCY = 8;

/**
 * The notify domain's facade (DESIGN.md §2, "notify never blocks the spine"). The spine only
 * writes durable rows (the ledger's ended executions, escalations) and calls wake(); one loop
 * per node then groups ended executions into messages, runs its other duties and hands due
 * deliveries to the deliverer. A wake-up is a hint: the loop also runs every `pollMs`, which
 * picks up retries that came due and work that other nodes wrote.
 */
export class Notifier {
  private readonly collector: RunCollector;
  private readonly deliverer: Deliverer;
  private readonly statements: Statements;
  private readonly asking: ApprovalAsking;
  private timer: NodeJS.Timeout | undefined;
  private running: Promise<void> | undefined;
  private again = false;
  private stopped = true;
  private lastPassEnded = -Infinity;

  constructor(private readonly deps: NotifierDeps) {
    const { store, settings } = deps;
    this.statements = new Statements(store.dialect);
    const linking = { links: deps.links, key: deps.box.derivedKey(SIGNED_LINK_PURPOSE), seconds: settings.snapshotLinkDays * 86_400 };
    this.asking = { links: deps.links, linkKey: deps.box.derivedKey(APPROVAL_LINK_PURPOSE), describe: deps.describeAction };
    this.collector = new RunCollector(store.db, linking, settings.groupWaitSeconds * 1000, deps.describeAction);
    this.deliverer = new Deliverer({
      db: store.db,
      dialect: store.dialect,
      box: deps.box,
      logger: deps.logger,
      options: { nodeId: deps.nodeId, concurrency: SEND_CONCURRENCY, egress: deps.egress, ...(deps.teams ? { teams: deps.teams } : {}), ...settings },
      settled: () => this.wake(),
    });
  }

  /**
   * For the execution ledger: the pending rows of ended executions, written with them. Only rows
   * written wake the loop: a tenant with no channel that could hear a result costs no pass (a pass
   * per ended execution was a fifth of the server's CPU at 20 executions/s: bench/e2e floor).
   */
  readonly ledgerOutbox: LedgerOutbox = {
    writes: (transitions, now) => pendingWrites(this.statements, transitions, now),
    written: () => this.wake(),
  };

  start(): void {
    this.stopped = false;
    this.timer = setInterval(() => this.wake(), this.deps.settings.pollMs).unref();
    this.wake();
  }

  async stop(): Promise<void> {
    this.stopped = true;
    clearInterval(this.timer);
    await this.running;
    await this.deliverer.idle();
  }

  /**
   * Runs the loop soon, but not sooner than `passSpacingMs` after the last pass; calls meanwhile
   * share that pass. Under load every ledger batch that ends executions a channel hears calls
   * this: a pass per batch cost ~2.5 ms each, a tenth of the server's core (bench/e2e, CPU profile).
   */
  wake(): void {
    if (this.stopped) return;
    if (this.running) {
      this.again = true;
      return;
    }
    this.running = this.spaced().then(() => this.loop()).finally(() => {
      this.running = undefined;
    });
  }

  /** Enqueues an escalation once per (rule, host, window start); see escalate.ts. */
  async escalate(escalation: Escalation): Promise<string | null> {
    const id = await escalate(this.deps.store.db, this.deps.links, escalation);
    if (id) this.wake();
    return id;
  }

  /** Tells the on-call contacts once that a run asking to escalate expired undecided (approval-escalation.ts). */
  async escalateUndecided(tenantId: string, executionId: string): Promise<string | null> {
    const id = await escalateUndecided(this.deps.store.db, this.asking, tenantId, executionId);
    if (id) this.wake();
    return id;
  }

  /** Sends the escalations owed for runs that expired undecided while their message was never written (approval-escalation.ts). */
  async escalateOwed(now = Date.now()): Promise<number> {
    const written = await escalateOwed(this.deps.store.db, this.asking, now);
    if (written > 0) this.wake();
    return written;
  }

  /** Tells people once that a scheduled tick ran nothing (not-run.ts). */
  async tellNotRun(tenantId: string, eventId: string): Promise<string | null> {
    const id = await tellNotRun(this.deps.store.db, this.deps.links, tenantId, eventId);
    if (id) this.wake();
    return id;
  }

  /** Sends a test message now, records the attempt and returns how it went (the "send test" button). */
  async sendTest(row: NotifyChannelRow): Promise<SendResult & { durationMs: number }> {
    const started = performance.now();
    const notification: TestNotification = { kind: 'test', severity: 'ok', channel: { id: row.id, name: row.name, type: row.type }, sentAt: new Date().toISOString() };
    let result: SendResult;
    try {
      result = await sendNotification(openChannel(this.deps.box, row), notification, { messageId: `test-${row.id}`, deliveryId: `test-${Date.now()}`, createdAt: notification.sentAt }, { timeoutMs: this.deps.settings.sendTimeoutMs, egress: this.deps.egress, slackApiUrl: this.deps.settings.slackApiUrl });
    } catch (error) {
      result = { ok: false, status: null, error: (error as Error).message, retryable: false };
    }
    const durationMs = performance.now() - started;
    await recordAttempt(this.deps.store.db, { tenantId: row.tenant_id, channelId: row.id, deliveryId: null, kind: 'test', title: digest(notification).title, attempt: 1, result, durationMs });
    return { ...result, durationMs: Math.round(durationMs) };
  }

  /** One pass of the loop, now: duties, requests for approval and their chat messages' updates, grouping, then handing due deliveries to senders. */
  async pass(): Promise<void> {
    for (const duty of this.deps.duties ?? []) await duty();
    await askForApprovals(this.deps.store.db, this.asking);
    await queueOutcomeUpdates(this.deps.store.db);
    await this.collector.collect();
    await this.deliverer.pump();
  }

  private async loop(): Promise<void> {
    do {
      this.again = false;
      try {
        await this.pass();
      } catch (error) {
        this.deps.logger.error({ err: error }, 'notifier pass failed; the next one runs in a moment');
      }
      this.lastPassEnded = performance.now();
      if (this.again) await this.spaced();
    } while (this.again && !this.stopped);
  }

  /**
   * Waits out the spacing. A timer counts from the event loop's cached time, which lags the real
   * time on a busy process, so it can fire early (a CI run saw the next pass start < 299 ms after
   * the last at 300): it is asked again until the spacing has really passed.
   */
  private async spaced(): Promise<void> {
    let wait = this.lastPassEnded + this.deps.settings.passSpacingMs - performance.now();
    if (wait <= 0) return new Promise((resolve) => setImmediate(resolve));
    while (wait > 0) {
      await new Promise((resolve) => setTimeout(resolve, Math.ceil(wait)));
      wait = this.lastPassEnded + this.deps.settings.passSpacingMs - performance.now();
    }
  }
}
