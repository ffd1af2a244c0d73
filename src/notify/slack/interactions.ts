import type { FastifyBaseLogger, FastifyReply, FastifyRequest } from 'fastify';
import { PitcrewError } from '../../errors/catalogue.js';
import type { ApprovalDeps } from '../../executions/approval-decision.js';
import { problems } from '../../http/schemas.js';
import type { Api } from '../../http/types.js';
import type { SecretBox } from '../../identity/secret-box.js';
import type { ExecutionRow } from '../../store/schema.js';
import { openChannel } from '../channels.js';
import { APPROVE_ACTION, REJECT_ACTION } from '../messages/slack-approval.js';
import { decideClick, type Click } from './click.js';
import { claimLapsed, forgetClick, keepClick, lapsedClicks, storedClickOf, type StoredClick } from './click-inbox.js';
import { hasSlackApp, type SlackSettings } from '../senders/slack-app.js';
import { SIGNATURE_HEADER, signedWith, staleTimestamp, TIMESTAMP_HEADER } from './signature.js';
import type { SlackReach } from '../senders/slack-web-api.js';

/** DESIGN.md §7: the fixed point Slack's Interactivity Request URL names. */
export const SLACK_INTERACTIONS_PATH = '/chat/slack/interactions';
/** A block_actions payload carries the whole message clicked: tens of kilobytes at most. */
const FORM_LIMIT = 1024 * 1024;
const EXECUTION_ID = /^[0-9a-f]{8}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{12}$/;

export interface SlackInteractionDeps extends ApprovalDeps {
  box: SecretBox;
  reach: SlackReach;
  logger: FastifyBaseLogger;
  /** After a commit: an approved run goes to its agent (as the approve route's). */
  decided(row: ExecutionRow): void;
}

type FormRequest = FastifyRequest & { rawBody?: string };

/**
 * Slack's button clicks (docs/approvals.md, "In Slack"). Slack POSTs
 * application/x-www-form-urlencoded with one field, `payload`, the JSON of a block_actions
 * interaction (docs.slack.dev/reference/interaction-payloads/block_actions-payload: type,
 * user.id, api_app_id, team, actions[{action_id, value}], response_url), signed (signature.ts).
 * The button's value is the execution: its tenant's Slack channels with an app hold the signing
 * secrets it may be signed with, and nothing is read further until one verifies. Slack wants an
 * answer within 3 seconds and sends a click once: the route keeps the verified click
 * (click-inbox.ts), answers 200, and the decision (a users.info call, the rule's lock) is taken
 * after, its outcome told to the clicker through the payload's response_url. A click its node
 * stopped before deciding is decided by the next sweep of any node (decideLapsed).
 */
export class SlackInteractions {
  private readonly inFlight = new Set<Promise<void>>();

  constructor(private readonly deps: SlackInteractionDeps) {}

  register(app: Api): void {
    void app.register(async (scope) => {
      scope.removeAllContentTypeParsers();
      scope.addContentTypeParser('application/x-www-form-urlencoded', { parseAs: 'string', bodyLimit: FORM_LIMIT }, (request, body, done) => {
        (request as FormRequest).rawBody = String(body);
        done(null, undefined);
      });
      scope.post(SLACK_INTERACTIONS_PATH, {
        validatorCompiler: () => () => true,
        schema: {
          tags: ['executions'], security: [],
          summary: "Slack's interactive payload (Approve or Reject clicked), signed with the Slack app's signing secret",
          description: 'application/x-www-form-urlencoded with a `payload` field, as Slack sends it. 200 once verified; the outcome goes to the clicker through the response_url. No bearer token: the X-Slack-Signature authenticates.',
          response: { ...problems(400, 401, 415) },
        },
      }, (request, reply) => this.receive(request as FormRequest, reply));
    });
  }

  /** Resolves once the clicks taken so far are decided and answered (the service's shutdown). */
  async drain(): Promise<void> {
    while (this.inFlight.size > 0) await Promise.allSettled([...this.inFlight]);
  }

  private async receive(request: FormRequest, reply: FastifyReply): Promise<FastifyReply> {
    const raw = request.rawBody ?? '';
    const timestamp = header(request, TIMESTAMP_HEADER);
    const stale = staleTimestamp(timestamp, this.deps.clock());
    if (stale) throw refused(stale);
    const payload = payloadOf(raw);
    const action = payload.actions?.[0];
    // The value is read before the signature verifies only to find whose secret to verify with.
    const executionId = typeof action?.value === 'string' && EXECUTION_ID.test(action.value) ? action.value : null;
    const signer = executionId ? await this.signerOf(executionId, timestamp!, raw, header(request, SIGNATURE_HEADER)) : null;
    if (!signer) throw refused("the X-Slack-Signature does not verify with the signing secret of any Slack channel that could have sent it: check the channel's signingSecret against the app's (Basic Information, App Credentials)");
    if (payload.type !== 'block_actions' || (action!.action_id !== APPROVE_ACTION && action!.action_id !== REJECT_ACTION)) {
      return reply.code(200).send();
    }
    const click: StoredClick = {
      tenantId: signer.tenantId, channelId: signer.channelId, executionId: executionId!, verdict: action!.action_id === APPROVE_ACTION ? 'approve' : 'reject',
      slackUserId: String(payload.user?.id ?? ''), responseUrl: typeof payload.response_url === 'string' ? payload.response_url : null, ip: request.ip,
    };
    // Kept before the 200: once answered, Slack never sends this click again.
    const id = await keepClick(this.deps.db, click, this.deps.clock());
    this.decide(id, { ...click, settings: signer.settings });
    return reply.code(200).send();
  }

  /** Decides the clicks whose node stopped before deciding them (the sweeper's, on every node). */
  async decideLapsed(now = this.deps.clock()): Promise<number> {
    let taken = 0;
    for (const row of await lapsedClicks(this.deps.db, now)) {
      if (!(await claimLapsed(this.deps.db, row.id, now))) continue;
      taken += 1;
      const click = storedClickOf(row);
      const settings = await this.appOf(click.tenantId, click.channelId);
      if (!settings) {
        this.deps.logger.warn({ executionId: click.executionId, channelId: click.channelId }, 'a Slack click was dropped undecided: its channel or Slack app is gone');
        await forgetClick(this.deps.db, row.id);
        continue;
      }
      this.deps.logger.info({ executionId: click.executionId, receivedAt: row.received_at }, 'deciding a Slack click its node did not');
      this.decide(row.id, { ...click, settings });
    }
    return taken;
  }

  /** Decides a kept click, then forgets it; one that fails is kept, for a sweep once its claim lapses. */
  private decide(id: string, click: Click): void {
    const deciding: Promise<void> = decideClick(this.deps, click)
      .then(() => forgetClick(this.deps.db, id))
      .catch((error: unknown) => this.deps.logger.error({ err: error, executionId: click.executionId }, 'a Slack click could not be decided; a sweep will try it again'))
      .finally(() => this.inFlight.delete(deciding));
    this.inFlight.add(deciding);
  }

  private async appOf(tenantId: string, channelId: string): Promise<SlackSettings | undefined> {
    return (await this.appsOf(tenantId, channelId))[0]?.settings;
  }

  /** The tenant and Slack app whose signing secret the request was signed with, through the execution its button names. */
  private async signerOf(executionId: string, timestamp: string, raw: string, signature: string | undefined): Promise<{ tenantId: string; channelId: string; settings: SlackSettings } | null> {
    const execution = await this.deps.db.selectFrom('executions').select('tenant_id').where('id', '=', executionId).executeTakeFirst();
    if (!execution) return null;
    const apps = await this.appsOf(execution.tenant_id);
    const index = signedWith(apps.map((app) => app.settings.signingSecret!), timestamp, raw, signature);
    return index < 0 ? null : { tenantId: execution.tenant_id, ...apps[index]! };
  }

  /** The tenant's Slack channels that have an app (one channel's, given its id), opened. */
  private async appsOf(tenantId: string, channelId?: string): Promise<Array<{ channelId: string; settings: SlackSettings }>> {
    let query = this.deps.db.selectFrom('notify_channels').selectAll().where('tenant_id', '=', tenantId).where('type', '=', 'slack');
    if (channelId !== undefined) query = query.where('id', '=', channelId);
    const rows = await query.execute();
    return rows
      .map((row) => ({ channelId: row.id, config: openChannel(this.deps.box, row).config }))
      .filter((app) => hasSlackApp(app.config))
      .map((app) => ({ channelId: app.channelId, settings: app.config as unknown as SlackSettings }));
  }
}

interface BlockActionsPayload {
  type?: string;
  user?: { id?: unknown };
  actions?: Array<{ action_id?: unknown; value?: unknown }>;
  response_url?: unknown;
}

function payloadOf(raw: string): BlockActionsPayload {
  const field = new URLSearchParams(raw).get('payload');
  if (field === null) throw new PitcrewError('PITCREW_ERR_VALIDATION', 'the body has no `payload` field: this URL takes the interactive payloads Slack sends (application/x-www-form-urlencoded, payload=<JSON>)');
  try {
    const parsed = JSON.parse(field) as unknown;
    if (parsed && typeof parsed === 'object' && !Array.isArray(parsed)) return parsed as BlockActionsPayload;
  } catch {
    // Told below.
  }
  throw new PitcrewError('PITCREW_ERR_VALIDATION', 'the `payload` field is not a JSON object, as Slack sends it');
}

function header(request: FastifyRequest, name: string): string | undefined {
  const value = request.headers[name];
  return typeof value === 'string' ? value : undefined;
}

function refused(why: string): PitcrewError {
  return new PitcrewError('PITCREW_ERR_UNAUTHENTICATED', `not a request from the tenant's Slack app: ${why}. Nothing was decided`);
}
