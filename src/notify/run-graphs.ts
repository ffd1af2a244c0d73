import type { Kysely, Transaction } from 'kysely';
import { ACTIVE_STATES } from '../executions/states.js';
import { linkQuery } from '../snapshots/signed-link.js';
import { snapshotsOfEvent } from '../snapshots/repository.js';
import type { Database } from '../store/schema.js';
import type { UiLinks } from './links.js';
import { MAX_LISTED, type SnapshotRef } from './notification.js';

/**
 * How long a fix's message waits for its companion capture ("capture graphs too") once the fix's
 * executions have ended: a Prometheus graph is drawn in well under a second (bench/snapshots.js),
 * Grafana renders in a few seconds and Datadog's storage may take 15 tries a second apart. Past it
 * the fix's message goes without the pictures, saying they are still being captured, and the
 * capture's own message brings them when it ends. Never longer than the grouping wait.
 */
export const COMPANION_WAIT_MS = 20_000;

/** How signed links are made for the messages (docs/graph-snapshots.md, "Links"). */
export interface SnapshotLinking {
  links: UiLinks;
  /** The key signed links are made with (snapshots/signed-link.ts). */
  key: Buffer;
  /** How long a link opens its image. */
  seconds: number;
}

export interface RunMemberWithRole {
  id: string;
  state: string;
  hostname: string;
  companion: number;
  reason: string | null;
}

/** The events, of those given, with an execution still active, by whether it is a fix's companion capture. */
export async function activeOf(db: Kysely<Database>, eventIds: readonly string[]): Promise<{ fixes: Set<string>; companions: Set<string> }> {
  const rows = await db.selectFrom('executions').select(['event_id', 'companion']).where('event_id', 'in', [...eventIds])
    .where('state', 'in', [...ACTIVE_STATES]).groupBy(['event_id', 'companion']).execute();
  const fixes = new Set<string>();
  const companions = new Set<string>();
  for (const row of rows) (Number(row.companion) === 1 ? companions : fixes).add(row.event_id);
  return { fixes, companions };
}

/** Whether an event's ended executions are reported now (pure): its fixes have ended, and its capture too or it has had its wait. */
export function readyToReport(eventId: string, firstAt: number, active: { fixes: Set<string>; companions: Set<string> }, groupWaitMs: number, now: number): boolean {
  if (firstAt + groupWaitMs <= now) return true;
  if (active.fixes.has(eventId)) return false;
  return !active.companions.has(eventId) || firstAt + COMPANION_WAIT_MS <= now;
}

/** The event's snapshots as a message shows them, each with a signed link open for `linking.seconds`. */
export async function snapshotRefs(tx: Transaction<Database>, tenantId: string, eventId: string, linking: SnapshotLinking, now: number): Promise<SnapshotRef[]> {
  const rows = await snapshotsOfEvent(tx, tenantId, eventId, MAX_LISTED);
  const exp = Math.floor(now / 1000) + linking.seconds;
  return rows.map((row) => ({
    id: row.id, title: row.title, contentType: row.content_type, width: row.width, height: row.height, bytes: row.bytes,
    url: linking.links.snapshot(row.id, linkQuery(linking.key, { tenantId, snapshotId: row.id }, exp)),
  }));
}

/** Why a fix's message has no pictures of its companion capture, in words (pure); undefined when it has them or has none to wait for. */
export function graphNote(companions: readonly RunMemberWithRole[], pictures: number): string | undefined {
  if (companions.length === 0 || pictures > 0) return undefined;
  const capture = companions[0]!;
  if ((ACTIVE_STATES as readonly string[]).includes(capture.state)) return 'the graphs are still being captured: they come in a message of their own';
  if (capture.state === 'succeeded') return undefined;
  return `the graphs were not captured (${capture.state.replace('_', ' ')}): ${capture.reason ?? 'no reason recorded'}`;
}
