import type { Kysely } from 'kysely';
import type { EgressPolicy } from '../egress/policy.js';
import type { AccountMailPurpose, LinkMessage } from '../identity/account-links.js';
import type { SecretBox } from '../identity/secret-box.js';
import type { Database } from '../store/schema.js';
import { assertNever } from '../errors/assert-never.js';
import { openChannel } from './channels.js';
import { escapeHtml, type EmailContent } from './messages/email.js';
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
 * Sends an invitation or password-reset link, or a notice about the account, to one person, now,
 * through the tenant's SMTP server (its escalation e-mail channel, else its first e-mail channel).
 * Not through the outbox: the link is a credential, and the outbox keeps what it sends. The caller
 * also shows the link to the admin, so a failed send loses nothing.
 */
export async function sendAccountMail(deps: AccountMailDeps, tenantId: string, to: string, link: LinkMessage): Promise<AccountMailResult> {
  const routing = (await routingOf(deps.db, [tenantId])).get(tenantId)!;
  const smtp = smtpChannel(routing.channels, routing.contacts);
  const yourself = link.purpose === 'totp_reset' ? 'tell them yourself' : 'send the link yourself';
  if (!smtp) return { sent: false, detail: `not e-mailed: the tenant has no e-mail channel (its SMTP server sends account mail); ${yourself}` };
  const row = await deps.db.selectFrom('notify_channels').selectAll().where('id', '=', smtp.id).executeTakeFirstOrThrow();
  const result = await sendMail(openChannel(deps.box, row).config as unknown as SmtpSettings, [to], linkMail(link), { timeoutMs: deps.timeoutMs, egress: deps.egress });
  return result.ok ? { sent: true, detail: `e-mailed to ${to} through the channel ${row.name}` } : { sent: false, detail: `not e-mailed (${result.error}); ${yourself}` };
}

/** The mail that carries an invitation or a password reset link, or tells of a second factor removed. */
export function linkMail({ purpose, url, tenantName, role }: LinkMessage): EmailContent {
  const [subject, lead, after] = wordsOf(purpose, tenantName, role);
  return {
    subject,
    text: `${lead}\n\n${url}\n\n${after}\n`,
    html: `<p>${escapeHtml(lead)}</p><p><a href="${escapeHtml(url)}">${escapeHtml(url)}</a></p><p>${escapeHtml(after)}</p>`,
  };
}

/** Subject, the line before the link, the line after it. */
function wordsOf(purpose: AccountMailPurpose, tenantName: string, role: string | undefined): [string, string, string] {
  switch (purpose) {
    case 'invite':
      return [`You are invited to pitcrew (${tenantName})`, `You are invited to the pitcrew tenant "${tenantName}"${role ? ` as ${role}` : ''}. Open this link to set your password and sign in:`, 'The link works once, for 7 days.'];
    case 'reset':
      return [`Reset your pitcrew password (${tenantName})`, 'Someone asked to reset your pitcrew password. Open this link to set a new one:', 'The link works once, for 1 hour. If you did not ask, ignore this mail: your password stays as it is.'];
    case 'totp_reset':
      return [
        `Your pitcrew second factor was removed (${tenantName})`,
        `An admin of the pitcrew tenant "${tenantName}" removed the second factor (authenticator app) of your account, and signed you out everywhere. Sign in with your password alone, then set up a new second factor:`,
        'If you did not ask for this, tell an admin of the tenant at once: someone who knows your password can now sign in with it alone.',
      ];
    default:
      return assertNever(purpose);
  }
}
