import type { LinkPurpose } from './invitations.js';

/** What a one-time link's mail says: the link, what it is for, and the tenant it opens. */
export interface LinkMessage {
  purpose: LinkPurpose;
  url: string;
  tenantName: string;
  /** The role an invitation gives. */
  role?: string;
}

/** Sends a one-time link to a person (notify/account-mail.ts, wired in server/app.ts). */
export type MailLink = (tenantId: string, to: string, link: LinkMessage) => Promise<{ sent: boolean; detail: string }>;
