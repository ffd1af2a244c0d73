import { hash, timingSafeEqual } from 'node:crypto';

const BEARER = /^Bearer\s+(\S+)$/i;

/**
 * Whether an Authorization header carries the metrics token, as Prometheus' `authorization`
 * scrape setting sends it (`Bearer <token>`). Both sides are hashed first, so the comparison
 * takes the same time whatever the length or the first wrong character of what was sent.
 */
export function carriesMetricsToken(authorization: string | undefined, token: string): boolean {
  const presented = BEARER.exec(authorization ?? '')?.[1];
  if (presented === undefined) return false;
  return timingSafeEqual(hash('sha256', presented, 'buffer'), hash('sha256', token, 'buffer'));
}
