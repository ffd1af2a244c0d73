import type { LinkPurpose } from './invitations.js';

/** What a mail to one person is about: a one-time link's purpose, or `totp_reset` (an admin removed their second factor). */
export type AccountMailPurpose = LinkPurpose | 'totp_reset';

/** What an account mail says: the link (for a notice: the page to go on from), what it is for, and the tenant. */
export interface LinkMessage {
  purpose: AccountMailPurpose;
  url: string;
  tenantName: string;
  /** The role an invitation gives. */
  role?: string;
}

/** Sends a one-time link or an account notice to a person (notify/account-mail.ts, wired in server/app.ts). */
export type MailLink = (tenantId: string, to: string, link: LinkMessage) => Promise<{ sent: boolean; detail: string }>;
