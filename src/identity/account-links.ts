import type { LinkPurpose } from './invitations.js';

/** Sends a one-time link to a person (notify/account-mail.ts, wired in server/app.ts). */
export type MailLink = (tenantId: string, to: string, content: { subject: string; text: string; html: string }) => Promise<{ sent: boolean; detail: string }>;

const escape = (text: string) => text.replace(/[&<>"']/g, (c) => `&#${c.charCodeAt(0)};`);

/** The mail that carries an invitation or a password reset link. */
export function linkMail(purpose: LinkPurpose, url: string, tenantName: string, role?: string): { subject: string; text: string; html: string } {
  const [subject, lead, validity] = purpose === 'invite'
    ? [`You are invited to pitcrew (${tenantName})`, `You are invited to the pitcrew tenant "${tenantName}"${role ? ` as ${role}` : ''}. Open this link to set your password and sign in:`, 'The link works once, for 7 days.']
    : [`Reset your pitcrew password (${tenantName})`, 'Someone asked to reset your pitcrew password. Open this link to set a new one:', 'The link works once, for 1 hour. If you did not ask, ignore this mail: your password stays as it is.'];
  return {
    subject,
    text: `${lead}\n\n${url}\n\n${validity}\n`,
    html: `<p>${escape(lead)}</p><p><a href="${escape(url)}">${escape(url)}</a></p><p>${escape(validity)}</p>`,
  };
}
