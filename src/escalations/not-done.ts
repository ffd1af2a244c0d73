import type { Action } from '../rules/schema.js';

/** What an action limit kept pitcrew from doing, in the words of the escalation message. */
export function notDone(action: Action, hostname: string): string {
  if (action.type === 'script') {
    const firstLine = action.runbook.script.trim().split('\n')[0]!.slice(0, 120);
    return `did not run the ${action.flavour} script "${firstLine}" on ${hostname} for this alarm or later ones in the window`;
  }
  return `did not run the ${action.type} action on ${hostname} for this alarm or later ones in the window`;
}
