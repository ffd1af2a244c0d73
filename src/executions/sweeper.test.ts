import { describe, expect, it } from 'vitest';
import { OVERDUE_GRACE_MS, overdueReason } from './sweeper.js';

describe('overdueReason', () => {
  const spec = JSON.stringify({ flavour: 'autofix', interpreter: 'sh', script: 'true', env: {}, context: {}, timeoutSeconds: 60 });
  const row = { state: 'running', dispatched_at: 1_000_000, spec };
  const deadline = 1_000_000 + 60_000 + OVERDUE_GRACE_MS;

  it('waits for the result until the timeout and the grace after it have passed', () => {
    expect(overdueReason(row, deadline - 1)).toBeUndefined();
  });

  it('then gives the reason, with the timeout and the grace', () => {
    expect(overdueReason(row, deadline)).toBe("no result from the agent 5 min after the script's 60 s timeout ran out: the host or its agent is probably down. It was not re-run; a result the agent sends later is kept as lateResult");
  });

  it('says the agent is stuck when it never started what it was sent', () => {
    expect(overdueReason({ ...row, state: 'dispatched' }, deadline - 1)).toBeUndefined();
    expect(overdueReason({ ...row, state: 'dispatched' }, deadline)).toBe("the agent was sent it and never said it started, 5 min after the script's 60 s timeout ran out: the agent is probably stuck (a hung disk, a frozen process). It was not re-run; a result the agent sends later is kept as lateResult");
  });
});
