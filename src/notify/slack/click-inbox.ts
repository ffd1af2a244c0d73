import type { Kysely } from 'kysely';
import type { Verdict } from '../../executions/approval-decision.js';
import { newId } from '../../store/ids.js';
import type { Database, SlackClickRow } from '../../store/schema.js';

/**
 * How long the node that answered a click holds it while deciding (users.info, the rule's lock,
 * the clicker told): far beyond the seconds that takes, so only a node that stopped lets one lapse.
 */
export const CLICK_CLAIM_MS = 60_000;

/** A verified click as it is kept until decided: the channel by id, its secrets left where they are sealed. */
export interface StoredClick {
  tenantId: string;
  channelId: string;
  executionId: string;
  verdict: Verdict;
  slackUserId: string;
  responseUrl: string | null;
  ip: string;
}

/** Keeps a click before Slack is answered, claimed by the node that answers it; returns its id. */
export async function keepClick(db: Kysely<Database>, click: StoredClick, now: number): Promise<string> {
  const id = newId(now);
  await db.insertInto('slack_clicks').values({
    id, tenant_id: click.tenantId, channel_id: click.channelId, execution_id: click.executionId, verdict: click.verdict,
    slack_user_id: click.slackUserId, response_url: click.responseUrl, ip: click.ip, received_at: now, claimed_until: now + CLICK_CLAIM_MS,
  }).execute();
  return id;
}

/** Clicks whose claim lapsed: their node stopped before deciding them. Oldest first. */
export async function lapsedClicks(db: Kysely<Database>, now: number): Promise<SlackClickRow[]> {
  return db.selectFrom('slack_clicks').selectAll().where('claimed_until', '<', now).orderBy('id').limit(100).execute();
}

/** Takes a lapsed click for this node; false when another node took it first. */
export async function claimLapsed(db: Kysely<Database>, id: string, now: number): Promise<boolean> {
  const taken = await db.updateTable('slack_clicks').set({ claimed_until: now + CLICK_CLAIM_MS }).where('id', '=', id).where('claimed_until', '<', now).executeTakeFirst();
  return Number(taken.numUpdatedRows) === 1;
}

/** A click decided (or refused) and its clicker told: nothing is owed any more. */
export async function forgetClick(db: Kysely<Database>, id: string): Promise<void> {
  await db.deleteFrom('slack_clicks').where('id', '=', id).execute();
}

export function storedClickOf(row: SlackClickRow): StoredClick {
  return {
    tenantId: row.tenant_id, channelId: row.channel_id, executionId: row.execution_id, verdict: row.verdict as Verdict,
    slackUserId: row.slack_user_id, responseUrl: row.response_url, ip: row.ip,
  };
}
