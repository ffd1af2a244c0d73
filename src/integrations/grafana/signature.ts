import { createHmac, timingSafeEqual } from 'node:crypto';
import type { FieldError } from '../../errors/catalogue.js';
import type { ToolRequest } from '../notification.js';
import { shown } from '../alertmanager/alert.js';
import { times } from '../../errors/counts.js';

/**
 * Grafana's webhook HMAC signing (grafana/alerting http/hmac.go, `hmacConfig` of the webhook
 * contact point): hex(HMAC-SHA256(secret, body)) in the header `X-Grafana-Alerting-Signature`
 * (or the header the contact point names); when the contact point names a timestamp header,
 * Grafana puts the Unix time in seconds there and signs `timestamp + ":" + body` instead.
 * Grafana has no default timestamp header: `config.timestampHeader` must name the same one.
 */
export const GRAFANA_SIGNATURE_HEADER = 'x-grafana-alerting-signature';

/** A signed timestamp further than this from now is refused as a replay (or a clock that is off). */
export const GRAFANA_REPLAY_WINDOW_MS = 5 * 60_000;

/** RFC 9110 token: what a header name may hold. */
const HEADER_NAME = /^[!#$%&'*+\-.^_`|~0-9A-Za-z]+$/;

/**
 * The signature's errors, none when the request is signed with the integration's secret (or
 * the integration has no secret, and so nothing to check). Every path starts with `/headers/`:
 * the route answers these with 401, unlike the body's errors.
 */
export function verifyGrafanaSignature(request: ToolRequest): FieldError[] {
  if (request.secret === undefined || request.secret === '') return [];
  const names = readHeaderNames(request.config, '/config');
  if (Array.isArray(names)) return names;

  const signature = oneHeader(request, names.signature);
  if (typeof signature !== 'string') return [signature];

  let signed = request.rawBody;
  let timestamp: number | undefined;
  if (names.timestamp !== undefined) {
    const value = oneHeader(request, names.timestamp);
    if (typeof value !== 'string') return [value];
    if (!/^\d{1,12}$/.test(value.trim())) {
      return [{ path: `/headers/${names.timestamp}`, message: `${names.timestamp}: expected the Unix time in seconds Grafana signs, got ${shown(value)}` }];
    }
    timestamp = Number(value.trim()) * 1000;
    signed = `${value.trim()}:${request.rawBody}`;
  }

  const expected = createHmac('sha256', request.secret).update(signed, 'utf8').digest();
  const presented = signature.trim().toLowerCase();
  const matches = /^[0-9a-f]{64}$/.test(presented) && timingSafeEqual(Buffer.from(presented, 'hex'), expected);
  if (!matches) {
    const hint = names.timestamp === undefined
      ? ' If the contact point sets a timestamp header, set the same name as timestampHeader in this integration.'
      : '';
    return [{ path: `/headers/${names.signature}`, message: `${names.signature}: the signature does not match the body signed with this integration's secret; check that the contact point's HMAC secret is the one set here.${hint}` }];
  }

  // Checked after the signature, so only an authentic request hears that it came too late.
  if (timestamp !== undefined && Math.abs(request.now - timestamp) > GRAFANA_REPLAY_WINDOW_MS) {
    const late = request.now > timestamp;
    return [{
      path: `/headers/${names.timestamp}`,
      message: `${names.timestamp}: the request was signed ${late ? 'more than 5 minutes ago' : 'more than 5 minutes in the future'} and is refused as a possible replay; check the clocks of Grafana and pitcrew if this was not one`,
    }];
  }
  return [];
}

interface HeaderNames {
  signature: string;
  timestamp: string | undefined;
}

/** `config.signatureHeader` (default X-Grafana-Alerting-Signature) and `config.timestampHeader`, lower-cased. */
export function readHeaderNames(config: Record<string, unknown>, at: string): HeaderNames | FieldError[] {
  const errors: FieldError[] = [];
  const read = (field: 'signatureHeader' | 'timestampHeader'): string | undefined => {
    const value = config[field];
    if (value === undefined || value === null || value === '') return undefined;
    if (typeof value !== 'string' || !HEADER_NAME.test(value)) {
      errors.push({ path: `${at}/${field}`, message: `${field}: expected an HTTP header name such as "X-Grafana-Alerting-Timestamp", got ${shown(value)}` });
      return undefined;
    }
    return value.toLowerCase();
  };
  const signature = read('signatureHeader') ?? GRAFANA_SIGNATURE_HEADER;
  const timestamp = read('timestampHeader');
  if (timestamp !== undefined && timestamp === signature) {
    errors.push({ path: `${at}/timestampHeader`, message: 'timestampHeader: must differ from signatureHeader' });
  }
  return errors.length > 0 ? errors : { signature, timestamp };
}

function oneHeader(request: ToolRequest, name: string): string | FieldError {
  const value = request.headers[name];
  if (value === undefined || value === '') {
    return { path: `/headers/${name}`, message: `${name}: missing; this integration has a signing secret, so the Grafana contact point must sign with it (HMAC Signature settings of the webhook)` };
  }
  if (Array.isArray(value)) {
    if (value.length === 1 && value[0] !== undefined) return value[0];
    return { path: `/headers/${name}`, message: `${name}: sent ${times(value.length)}; send it once` };
  }
  return value;
}
