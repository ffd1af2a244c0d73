import { X509Certificate, createVerify } from 'node:crypto';

/**
 * Verification of Amazon SNS message signatures, as "Verifying the signatures of Amazon SNS
 * messages" describes it (https://docs.aws.amazon.com/sns/latest/dg/sns-verify-signature-of-message.html,
 * awsdocs/amazon-sns-developer-guide doc_source/sns-verify-signature-of-message.md):
 *
 * - the string to sign is `Key\nValue\n` for a fixed list of keys, in byte order, that differs by
 *   message type (below); `Subject` only when the notification has one;
 * - SignatureVersion 1 is SHA1withRSA, 2 is SHA256withRSA, over that string, Base64-encoded;
 * - the public key is the X.509 certificate at SigningCertURL, which must be fetched over HTTPS from
 *   an SNS host: anyone can sign a body with their own certificate, so the URL is the trust anchor.
 *
 * The comparison is the RSA verification itself (crypto's verify), not a digest we compare:
 * there is no secret to leak by timing here, the certificate is public.
 */

/** The keys signed in a Notification, in the order SNS signs them. */
const NOTIFICATION_KEYS = ['Message', 'MessageId', 'Subject', 'Timestamp', 'TopicArn', 'Type'] as const;
/** The keys signed in a SubscriptionConfirmation or UnsubscribeConfirmation. */
const CONFIRMATION_KEYS = ['Message', 'MessageId', 'SubscribeURL', 'Timestamp', 'Token', 'TopicArn', 'Type'] as const;

/** The hosts SNS signs from: sns.<region>.amazonaws.com, and amazonaws.com.cn in the China regions. */
export const SNS_CERTIFICATE_HOST = /^sns\.[a-z0-9-]+\.amazonaws\.com(\.cn)?$/;

const ALGORITHMS: Record<string, string> = { '1': 'RSA-SHA1', '2': 'RSA-SHA256' };

export type SnsMessageType = 'Notification' | 'SubscriptionConfirmation' | 'UnsubscribeConfirmation';

/** The string SNS signed for this message (each signed key as `Key\nValue\n`). */
export function stringToSign(type: SnsMessageType, message: Record<string, unknown>): string {
  const keys = type === 'Notification' ? NOTIFICATION_KEYS : CONFIRMATION_KEYS;
  let out = '';
  for (const key of keys) {
    const value = message[key];
    // Subject is signed only when the publisher gave one; SNS leaves the key out otherwise.
    if (key === 'Subject' && typeof value !== 'string') continue;
    out += `${key}\n${String(value)}\n`;
  }
  return out;
}

/** Why a SigningCertURL may not be fetched, or undefined when it may. */
export function certificateUrlProblem(raw: string, hostPattern: RegExp): string | undefined {
  let url: URL;
  try {
    url = new URL(raw);
  } catch {
    return `SigningCertURL "${raw}" is not a URL`;
  }
  if (url.protocol !== 'https:') return `SigningCertURL must be an https URL (it is ${url.protocol}//...): SNS signs from https://sns.<region>.amazonaws.com`;
  if (url.username || url.password || url.port) return 'SigningCertURL must not carry credentials or a port';
  if (!hostPattern.test(url.hostname)) return `SigningCertURL's host ${url.hostname} is not an SNS host (expected sns.<region>.amazonaws.com)`;
  if (!url.pathname.endsWith('.pem')) return 'SigningCertURL must name a .pem certificate';
  return undefined;
}

/** The signature algorithm of a SignatureVersion, or undefined when SNS has no such version. */
export function signatureAlgorithm(version: string): string | undefined {
  return ALGORITHMS[version];
}

/**
 * Whether `signature` (Base64) is the signature of `signed` by the certificate `pem`, valid at `now`.
 * Returns the reason when it is not.
 */
export function verifySignature(input: { pem: string; algorithm: string; signed: string; signature: string; now: number }): string | undefined {
  let certificate: X509Certificate;
  try {
    certificate = new X509Certificate(input.pem);
  } catch {
    return 'the document at SigningCertURL is not a PEM X.509 certificate';
  }
  if (Date.parse(certificate.validFrom) > input.now || Date.parse(certificate.validTo) < input.now) {
    return `the signing certificate is not valid now (valid from ${certificate.validFrom} to ${certificate.validTo})`;
  }
  const signature = Buffer.from(input.signature, 'base64');
  if (signature.length === 0) return 'Signature is empty';
  const verifier = createVerify(input.algorithm);
  verifier.update(input.signed, 'utf8');
  let ok: boolean;
  try {
    ok = verifier.verify(certificate.publicKey, signature);
  } catch {
    ok = false;
  }
  return ok ? undefined : 'the signature does not match the message: it was not sent by Amazon SNS, or it was changed on the way';
}
