import { describe, expect, it } from 'vitest';
import { MAX_SKIPPED_LISTED, payloadForKind, unlistedEntry, withSkipped, type AlertPayload } from './alert.js';

const payload = (env: Record<string, string>, skippedEnv: AlertPayload['skippedEnv'] = []): AlertPayload => ({
  raw: env, hostName: undefined, appName: undefined, alarmName: undefined, severity: undefined, source: undefined, act: true, alarmState: undefined, env, skippedEnv,
});
const refusesAws = { refusesEnv: (name: string) => (name.startsWith('AWS_') ? 'reserved here' : undefined) };

describe('payloadForKind', () => {
  it('leaves the payload alone for a kind that refuses nothing more', () => {
    const given = payload({ AWS_REGION: 'eu-west-1' });
    expect(payloadForKind(given, {})).toBe(given);
    expect(payloadForKind(payload({ Note: 'x' }), refusesAws).env).toEqual({ Note: 'x' });
  });

  it('takes out what the kind refuses and lists it after what ingress skipped, with the reason', () => {
    const given = payload({ AWS_REGION: 'eu-west-1', Note: 'kept' }, [{ name: 'PATH', reason: 'reserved: it would change how the script process runs' }]);
    const taken = payloadForKind(given, refusesAws);
    expect(taken.env).toEqual({ Note: 'kept' });
    expect(taken.skippedEnv).toEqual([{ name: 'PATH', reason: 'reserved: it would change how the script process runs' }, { name: 'AWS_REGION', reason: 'reserved here' }]);
    expect(given.env).toEqual({ AWS_REGION: 'eu-west-1', Note: 'kept' });
  });
});

describe('withSkipped', () => {
  const names = (n: number, prefix: string) => Array.from({ length: n }, (_, i) => ({ name: `${prefix}${i}`, reason: 'r' }));

  it(`keeps at most ${MAX_SKIPPED_LISTED} listed and adds the rest to the count of the last entry`, () => {
    const full = [...names(MAX_SKIPPED_LISTED, 'k'), unlistedEntry(7)];
    expect(withSkipped(full, names(3, 'AWS_'))).toEqual([...names(MAX_SKIPPED_LISTED, 'k'), unlistedEntry(10)]);
    const almost = names(MAX_SKIPPED_LISTED - 1, 'k');
    expect(withSkipped(almost, names(3, 'AWS_'))).toEqual([...almost, { name: 'AWS_0', reason: 'r' }, unlistedEntry(2)]);
    expect(withSkipped([], names(2, 'AWS_'))).toEqual(names(2, 'AWS_'));
  });
});
