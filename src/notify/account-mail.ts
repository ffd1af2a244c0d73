import type { Kysely } from 'kysely';
import type { EgressPolicy } from '../egress/policy.js';
import type { SecretBox } from '../identity/secret-box.js';
import type { Database } from '../store/schema.js';
import { openChannel } from './channels.js';
import type { EmailContent } from './messages/email.js';
import { routingOf } from './outbox.js';
import { smtpChannel } from './routing.js';
import { sendMail, type SmtpSettings } from './senders/email.js';

export interface AccountMailDeps {
  db: Kysely<Database>;
  box: SecretBox;
  egress: EgressPolicy;
  timeoutMs: number;
}

/** What became of an account mail: sent, or why not (for the reply; never the link itself). */
export interface AccountMailResult {
  sent: boolean;
  detail: string;
}

/**
 * Sends an invitation or password-reset link to one person, now, through the tenant's SMTP server
 * (its escalation e-mail channel, else its first e-mail channel). Not through the outbox: the
 * link is a credential, and the outbox keeps what it sends. The caller also shows the link to the
 * admin, so a failed send loses nothing.
 */
export async function sendAccountMail(deps: AccountMailDeps, tenantId: string, to: string, content: EmailContent): Promise<AccountMailResult> {
  const routing = (await routingOf(deps.db, [tenantId])).get(tenantId)!;
  const smtp = smtpChannel(routing.channels, routing.contacts);
  if (!smtp) return { sent: false, detail: 'not e-mailed: the tenant has no e-mail channel (its SMTP server sends invitations); send the link yourself' };
  const row = await deps.db.selectFrom('notify_channels').selectAll().where('id', '=', smtp.id).executeTakeFirstOrThrow();
  const result = await sendMail(openChannel(deps.box, row).config as unknown as SmtpSettings, [to], content, { timeoutMs: deps.timeoutMs, egress: deps.egress });
  return result.ok ? { sent: true, detail: `e-mailed to ${to} through the channel ${row.name}` } : { sent: false, detail: `not e-mailed (${result.error}); send the link yourself` };
}
