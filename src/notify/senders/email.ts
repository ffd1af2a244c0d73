import { isIP } from 'node:net';
import { EGRESS_REFUSED, type EgressPolicy } from '../../egress/policy.js';
import type { EmailContent } from '../messages/email.js';

/** A part shown inside the HTML by its Content-ID (nodemailer makes the mail multipart/related). */
export interface InlinePart {
  filename: string;
  content: Buffer;
  contentType: string;
  cid: string;
  contentDisposition: 'inline';
}
import { scrub, type SendResult } from './result.js';

export interface SmtpSettings {
  host: string;
  port: number;
  secure: boolean;
  username?: string;
  password?: string;
  from: string;
  requireTls?: boolean;
  ca?: string;
}

/**
 * One SMTP session per mail: notifications are rare, and a fresh connection never sends on a
 * socket a failed server left half-open. `secure` is TLS from the start (465); otherwise STARTTLS,
 * required unless requireTls is false, so a password never crosses the network in clear.
 * Certificates are verified (against `ca` when given).
 */
export async function sendMail(smtp: SmtpSettings, to: readonly string[], content: EmailContent & { inline?: InlinePart[] }, options: { timeoutMs: number; egress: EgressPolicy }): Promise<SendResult> {
  const { timeoutMs } = options;
  const secrets = smtp.password ? [smtp.password] : [];
  let address: string;
  try {
    address = await options.egress.resolve(smtp.host);
  } catch (error) {
    const e = error as NodeJS.ErrnoException;
    if (e.code === EGRESS_REFUSED) return { ok: false, status: null, error: `not sent: ${e.message}`, retryable: false };
    return { ok: false, status: null, error: scrub(`SMTP delivery failed: ${smtp.host}:${smtp.port} (${e.code ?? 'lookup'}) ${e.message}`, secrets), retryable: true };
  }
  // Loaded by the first mail, not at start: ~0.05 s of CPU before the service listened, for
  // services most of which send no mail.
  const { default: nodemailer } = await import('nodemailer');
  const transport = nodemailer.createTransport({
    // The address the policy checked, so nodemailer's own lookup cannot land elsewhere; the name
    // is kept for the certificate check.
    host: address,
    ...(isIP(smtp.host) === 0 ? { servername: smtp.host } : {}),
    port: smtp.port,
    secure: smtp.secure,
    requireTLS: !smtp.secure && smtp.requireTls !== false,
    ...(smtp.username ? { auth: { user: smtp.username, pass: smtp.password ?? '' } } : {}),
    tls: { minVersion: 'TLSv1.2', ...(smtp.ca ? { ca: smtp.ca } : {}) },
    connectionTimeout: timeoutMs,
    greetingTimeout: timeoutMs,
    socketTimeout: timeoutMs,
  });
  try {
    const info = await transport.sendMail({ from: smtp.from, to: [...to], subject: content.subject, text: content.text, html: content.html, attachments: content.inline ?? [] });
    const code = /^(\d{3})/.exec(String(info.response ?? ''))?.[1];
    return { ok: true, status: code ? `SMTP ${code}` : null };
  } catch (error) {
    const e = error as { responseCode?: number; code?: string; message?: string };
    const status = e.responseCode ? `SMTP ${e.responseCode}` : null;
    // 5xx replies are permanent (RFC 5321 §4.2.1): a wrong password or a refused address.
    const retryable = !(e.responseCode && e.responseCode >= 500);
    const reason = `${smtp.host}:${smtp.port} ${e.code ? `(${e.code}) ` : ''}${e.message ?? 'failed'}`;
    return { ok: false, status, error: scrub(`SMTP delivery failed: ${reason}`, secrets), retryable };
  } finally {
    transport.close();
  }
}
