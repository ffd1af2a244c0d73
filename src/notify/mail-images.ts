import type { Kysely } from 'kysely';
import { imagesOf } from '../snapshots/repository.js';
import type { Database } from '../store/schema.js';
import { inlineGraphs } from './messages/email.js';
import type { Notification } from './notification.js';
import type { MailImage } from './senders/index.js';

/**
 * The images a mail carries inline, read at each send: the message stores which snapshots it
 * shows, not their bytes (a message row stays small, and a retry reads them again). A snapshot
 * deleted since (retention) is left out, and the mail names it instead.
 */
export async function mailImages(db: Kysely<Database>, tenantId: string, notification: Notification): Promise<MailImage[]> {
  const chosen = inlineGraphs(notification);
  if (chosen.length === 0) return [];
  const byId = new Map((await imagesOf(db, tenantId, chosen.map((graph) => graph.id))).map((row) => [row.id, row]));
  return chosen.flatMap((graph) => {
    const row = byId.get(graph.id);
    return row ? [{ id: row.id, contentType: row.content_type, bytes: row.image }] : [];
  });
}
