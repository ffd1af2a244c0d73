import { createHmac, timingSafeEqual } from 'node:crypto';

/*
 * The signed link in an approval request's e-mail (docs/approvals.md, "From the e-mail"):
 * `/executions/{id}/decide?exp=&sig=` opens a page that asks the signed-in person to confirm. The
 * link decides nothing by itself: the page posts the ordinary approve or reject route with the
 * person's session and role, and the link only says the decision came from the e-mail. sig is an
 * HMAC-SHA256, under a key of its own derived from the service's secret key (a snapshot link's key
 * opens no approval page, nor the reverse), of the tenant, the execution and exp (its deadline).
 */

export const APPROVAL_LINK_PURPOSE = 'approval links';

export interface ApprovalLinkSubject {
  tenantId: string;
  executionId: string;
}

export interface ApprovalLink {
  exp: string;
  sig: string;
}

function sign(key: Buffer, subject: ApprovalLinkSubject, expiresAtSeconds: number): string {
  return createHmac('sha256', key).update(`decide\n${subject.tenantId}\n${subject.executionId}\n${expiresAtSeconds}`).digest('base64url');
}

/** The query of the link to decide on the execution, valid until its approval deadline (ms). */
export function approvalLinkQuery(key: Buffer, subject: ApprovalLinkSubject, deadlineMs: number): string {
  const exp = Math.ceil(deadlineMs / 1000);
  return `exp=${exp}&sig=${sign(key, subject, exp)}`;
}

export type ApprovalLinkCheck = 'valid' | 'expired' | 'wrong';

export function checkApprovalLink(key: Buffer, subject: ApprovalLinkSubject, link: ApprovalLink, nowMs: number): ApprovalLinkCheck {
  if (!/^\d{1,12}$/.test(link.exp)) return 'wrong';
  const expected = Buffer.from(sign(key, subject, Number(link.exp)));
  const given = Buffer.from(link.sig);
  if (given.length !== expected.length || !timingSafeEqual(given, expected)) return 'wrong';
  return Number(link.exp) * 1000 <= nowMs ? 'expired' : 'valid';
}
