import { createHmac, timingSafeEqual } from 'node:crypto';

/*
 * A snapshot's signed link (docs/graph-snapshots.md, "Links"): `/api/v1/snapshots/{id}?exp=&sig=`
 * opens that one image until exp (epoch seconds) without a session, for chat messages and e-mails
 * read where no one is signed in. sig is an HMAC-SHA256, under a key derived from the service's
 * secret key (identity/secret-box.ts derivedKey), of the tenant, the snapshot and exp: it opens
 * no other snapshot, and no other tenant's, and an altered exp breaks it.
 */

export const SIGNED_LINK_PURPOSE = 'snapshot links';

export interface LinkSubject {
  tenantId: string;
  snapshotId: string;
}

export function signLink(key: Buffer, subject: LinkSubject, expiresAtSeconds: number): string {
  return createHmac('sha256', key).update(`${subject.tenantId}\n${subject.snapshotId}\n${expiresAtSeconds}`).digest('base64url');
}

/** The query of a link to the snapshot, open until `expiresAtSeconds`. */
export function linkQuery(key: Buffer, subject: LinkSubject, expiresAtSeconds: number): string {
  return `exp=${expiresAtSeconds}&sig=${signLink(key, subject, expiresAtSeconds)}`;
}

export type LinkCheck = 'valid' | 'expired' | 'wrong';

/** Whether a link's exp and sig open the snapshot now. */
export function checkLink(key: Buffer, subject: LinkSubject, exp: string | undefined, sig: string, nowMs: number): LinkCheck {
  if (exp === undefined || !/^\d{1,12}$/.test(exp)) return 'wrong';
  const expected = Buffer.from(signLink(key, subject, Number(exp)));
  const given = Buffer.from(sig);
  if (given.length !== expected.length || !timingSafeEqual(given, expected)) return 'wrong';
  return Number(exp) * 1000 <= nowMs ? 'expired' : 'valid';
}
