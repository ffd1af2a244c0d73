import { describe, expect, it } from 'vitest';
import { approvalTerms } from './approval.js';
import type { Action } from './schema.js';

const script: Action = { type: 'script', flavour: 'autofix', runbook: { script: 'true' } };
const terminate: Action = { type: 'cloud', operation: 'terminate', confirmTerminate: true };
const reboot: Action = { type: 'cloud', operation: 'reboot' };

describe('approvalTerms', () => {
  it.each([
    ['a script without a setting', script, null, null],
    ['a reboot without a setting', reboot, null, null],
    ['a terminate without a setting', terminate, null, { role: 'operator', timeoutSeconds: 3600, onTimeout: 'expire' }],
    ['a terminate turned off explicitly', terminate, { required: false }, null],
    ['a script that asks, defaults filled', script, { required: true }, { role: 'operator', timeoutSeconds: 3600, onTimeout: 'expire' }],
    ['a script that asks an admin, escalating', script, { required: true, role: 'admin' as const, timeoutSeconds: 120, onTimeout: 'escalate' as const }, { role: 'admin', timeoutSeconds: 120, onTimeout: 'escalate' }],
    ['a setting that does not ask', reboot, { required: false, role: 'admin' as const }, null],
  ])('%s', (_name, action, approval, expected) => {
    expect(approvalTerms({ action, approval })).toEqual(expected);
  });
});
