import type { SecretBox } from '../identity/secret-box.js';

export const TLS_TICKET_PURPOSE = 'tls session tickets';

/** The longest a TLS 1.3 ticket may live (RFC 8446 §4.6.1); an agent's ticket is as old as its connection. */
export const TICKET_LIFETIME_SECONDS = 7 * 24 * 3600;

/**
 * TLS session tickets every node of a cluster accepts, before and after a restart: the ticket key
 * is derived from the secret key (PITCREW_SECRET_KEY, or the data directory's secret.key), which
 * the nodes share already, so nothing new is stored or configured. An agent reconnecting to a
 * restarted node, or to another node, resumes its session: no certificate signature on the
 * service's side and one round trip fewer. Node's TLS server takes one ticket key, with no callback
 * to accept an older one, and a fleet's tickets are as old as its connections (days): a key that
 * rotated on a schedule would turn every restart after a rotation back into full handshakes, so
 * the key changes with the secret key (docs/security.md). Resumption in TLS 1.3 still makes a
 * fresh (EC)DHE exchange (psk_dhe_ke), so a leaked ticket key does not open recorded traffic.
 */
export function sessionTicketOptions(box: SecretBox): { ticketKeys: Buffer; sessionTimeout: number } {
  return { ticketKeys: box.derivedKey(TLS_TICKET_PURPOSE, 48), sessionTimeout: TICKET_LIFETIME_SECONDS };
}
