import type { FastifyBaseLogger } from 'fastify';
import type { Kysely } from 'kysely';
import type { Dialect } from '../store/database.js';
import type { Database, NotifyDeliveryRow } from '../store/schema.js';
import { preparedQuery } from '../store/prepared.js';
import { recordAttempt } from './attempts.js';
import { backoffMs } from './backoff.js';
import { openChannel } from './channels.js';
import type { Notification } from './notification.js';
import type { SecretBox } from '../identity/secret-box.js';
import type { EgressPolicy } from '../egress/policy.js';
import { sendNotification, type SendResult } from './senders/index.js';
import { counted } from '../errors/counts.js';
import { mailImages } from './mail-images.js';
import type { BotConnector } from './teams/connector.js';

export interface DelivererOptions {
  nodeId: string;
  maxAttempts: number;
  backoffBaseMs: number;
  backoffMaxMs: number;
  sendTimeoutMs: number;
  /** Sends in flight at once on this node. */
  concurrency: number;
  /** Where sends may connect. */
  egress: EgressPolicy;
  /** The Bot Connector, for Teams channels with a bot. */
  teams?: BotConnector;
  /** Slack's Web API (PITCREW_SLACK_API_URL). */
  slackApiUrl: string;
}

export interface DelivererDeps {
  db: Kysely<Database>;
  dialect: Dialect;
  box: SecretBox;
  logger: FastifyBaseLogger;
  options: DelivererOptions;
  /** Told when a delivery is settled (delivered or given up) or a slot frees up. */
  settled: (delivery: { messageId: string }) => void;
}

/**
 * Sends due deliveries, each at least once and, barring a crash mid-send, exactly once:
 * - a delivery is claimed with a lease (`sending`, owner, until): on PostgreSQL the claim skips
 *   rows another node is claiming (FOR UPDATE SKIP LOCKED), so two nodes never send the same one;
 *   a lease that runs out (its node died mid-send) makes the delivery due again;
 * - a failure is retried with exponential backoff up to maxAttempts; a receiver's refusal that
 *   waiting will not heal (a 4xx, an SMTP 5xx) ends it at once;
 * - every try is recorded (notify_attempts) and sets the channel's last delivered / last error.
 * Sends run beside the caller: pump() only claims and starts them, so it never waits on a receiver.
 */
export class Deliverer {
  private readonly inFlight = new Set<Promise<void>>();

  constructor(private readonly deps: DelivererDeps) {}

  /** Claims as many due deliveries as there are free slots and starts sending them. */
  async pump(now = Date.now()): Promise<number> {
    const free = this.deps.options.concurrency - this.inFlight.size;
    if (free <= 0) return 0;
    const claimed = await this.claim(free, now);
    for (const delivery of claimed) {
      const sending: Promise<void> = this.deliver(delivery)
        .catch((error: unknown) => this.deps.logger.error({ err: error, deliveryId: delivery.id }, 'notification delivery crashed; its lease runs out and it is tried again'))
        .finally(() => {
          this.inFlight.delete(sending);
          this.deps.settled({ messageId: delivery.message_id });
        });
      this.inFlight.add(sending);
    }
    return claimed.length;
  }

  /** Resolves once the sends started so far have ended. */
  async idle(): Promise<void> {
    while (this.inFlight.size > 0) await Promise.allSettled([...this.inFlight]);
  }

  private claim(limit: number, now: number): Promise<NotifyDeliveryRow[]> {
    const { db, options } = this.deps;
    // A lease outlives the longest send (an SMTP session has three timeouts) with room to record it.
    const leaseUntil = now + options.sendTimeoutMs * 4 + 10_000;
    return this.claimDue(db, limit, now, options.nodeId, leaseUntil);
  }

  /** Run by every notifier pass: built once (store/prepared.ts). */
  private readonly claimDue = preparedQuery((db, limit: number, now: number, nodeId: string, leaseUntil: number) => db
    .updateTable('notify_deliveries')
    .set({ state: 'sending', lease_owner: nodeId, lease_until: leaseUntil })
    .where('id', 'in', (eb) => {
      const due = eb
        .selectFrom('notify_deliveries')
        .select('id')
        .where((w) => w.or([
          w.and([w('state', '=', 'pending'), w('next_attempt_at', '<=', now)]),
          w.and([w('state', '=', 'sending'), w('lease_until', '<', now)]),
        ]))
        .orderBy('next_attempt_at')
        .limit(limit);
      return this.deps.dialect === 'postgres' ? due.forUpdate().skipLocked() : due;
    })
    .returningAll());

  private async deliver(delivery: NotifyDeliveryRow): Promise<void> {
    const { db, box, options } = this.deps;
    const started = performance.now();
    const message = await db.selectFrom('notify_messages').selectAll().where('id', '=', delivery.message_id).executeTakeFirst();
    const channel = await db.selectFrom('notify_channels').selectAll().where('id', '=', delivery.channel_id).executeTakeFirst();
    if (!message || !channel) {
      await db.updateTable('notify_deliveries').set({ state: 'failed', last_error: 'the channel was deleted', lease_owner: null, lease_until: null }).where('id', '=', delivery.id).execute();
      return;
    }
    let result: SendResult;
    try {
      const notification = JSON.parse(message.body) as Notification;
      const recipients = delivery.recipients ? (JSON.parse(delivery.recipients) as string[]) : null;
      const images = channel.type === 'email' ? await mailImages(db, delivery.tenant_id, notification) : [];
      const messageRef = delivery.message_ref ? (JSON.parse(delivery.message_ref) as object) : null;
      const meta = { messageId: message.id, deliveryId: delivery.id, createdAt: new Date(message.created_at).toISOString(), recipients, images, messageRef };
      result = await sendNotification(openChannel(box, channel), notification, meta, { timeoutMs: options.sendTimeoutMs, egress: options.egress, slackApiUrl: options.slackApiUrl, ...(options.teams ? { teams: options.teams } : {}) });
    } catch (error) {
      // Secrets that do not open (another key) will not open on a retry either.
      result = { ok: false, status: null, error: (error as Error).message, retryable: false };
    }
    await this.settle(delivery, { kind: message.kind, title: message.title }, result, performance.now() - started);
  }

  private async settle(delivery: NotifyDeliveryRow, message: { kind: string; title: string }, result: SendResult, durationMs: number): Promise<void> {
    const { db, options, logger } = this.deps;
    const attempt = delivery.attempts + 1;
    const now = Date.now();
    const retry = !result.ok && result.retryable && attempt < options.maxAttempts;
    const waitMs = retry ? backoffMs(attempt, options.backoffBaseMs, options.backoffMaxMs, result.retryAfterMs) : 0;
    const set = result.ok
      // A chat message's place, to update it with the outcome (notify/slack/outcome-updates.ts).
      ? { state: 'delivered', delivered_at: now, last_error: null, ...(result.ref ? { message_ref: JSON.stringify(result.ref) } : {}) }
      : retry
        ? { state: 'pending', next_attempt_at: now + waitMs, last_error: result.error }
        : { state: 'failed', last_error: result.retryable ? `${result.error} (gave up after ${counted(attempt, 'attempt')})` : result.error };
    await db.transaction().execute(async (tx) => {
      // Conditional on still holding the lease; if it ran out and another node took over, that node decides.
      await tx
        .updateTable('notify_deliveries')
        .set({ ...set, attempts: attempt, lease_owner: null, lease_until: null })
        .where('id', '=', delivery.id)
        .where('lease_owner', '=', options.nodeId)
        .where('state', '=', 'sending')
        .execute();
      await recordAttempt(tx, { tenantId: delivery.tenant_id, channelId: delivery.channel_id, deliveryId: delivery.id, kind: message.kind, title: message.title, attempt, result, durationMs }, now);
    });
    if (!result.ok) {
      const next = retry ? `retrying in ${waitMs} ms` : 'not retried';
      logger.warn({ channelId: delivery.channel_id, deliveryId: delivery.id, attempt, status: result.status, error: result.error }, `notification not delivered; ${next}`);
    }
  }
}
