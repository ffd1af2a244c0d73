import type { ActionKind } from './kind.js';

/**
 * A kind this version does not run (a spec stored by another version, naming a kind it does not know):
 * its events are recorded and accepted with the reason, and nothing is queued.
 */
export function recordedOnly(type: string): ActionKind {
  const never = (): never => {
    throw new Error(`${type} actions do not run in this version`);
  };
  return {
    type,
    escalatesAtLimit: false,
    plan: () => ({ runsOn: 'nowhere', reason: `${type} actions are recorded; this version does not run them yet` }),
    spec: never,
    describe: () => `the ${type} action`,
    notDone: (_rule, hostname) => `did not run the ${type} action on ${hostname} for this alarm or later ones in the window`,
  };
}
