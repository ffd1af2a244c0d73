import { describe, expect, it } from 'vitest';
import { expiryNotice } from './tls.js';

describe('expiryNotice', () => {
  const now = Date.parse('2026-11-22T00:00:00Z');
  const at = (iso: string, selfSigned = false) => expiryNotice({ validTo: new Date(iso), selfSigned }, '/var/lib/pitcrew', now);

  it('says nothing while the certificate has two weeks or more', () => {
    expect(at('2026-12-06T00:00:00Z')).toBeUndefined();
  });

  it('warns in the last two weeks, with the date', () => {
    expect(at('2026-12-05T12:00:00Z')).toEqual({ level: 'warn', message: 'the TLS certificate expires on 2026-12-05T12:00:00.000Z, in 13 days: renew it' });
  });

  it('is an error once it has expired, and says how to replace a self-signed one', () => {
    expect(at('2026-11-21T00:00:00Z', true)).toEqual({
      level: 'error',
      message: 'the TLS certificate expired on 2026-11-21T00:00:00.000Z and agents refuse it: remove /var/lib/pitcrew/tls to have a new one made, then give agents its fingerprint',
    });
  });
});
