import type { Rule } from '../api/types';
import { Definitions, optionalRow, type Definition } from '../ui/Definitions';
import { seconds } from '../ui/format';
import { describeAction, describeFanOut, describeFlapping, describeLimit, describeTarget, describeTrigger, INFRASTRUCTURE_LABELS } from './describe';

export function RuleSettings({ rule }: { rule: Rule }) {
  const { action } = rule;
  const runbook = 'runbook' in action ? action.runbook : undefined;
  const rows: Definition[] = [
    ['Trigger', describeTrigger(rule.trigger)],
    ['Action', describeAction(action)],
    ['Target', describeTarget(rule.target, rule.trigger.type)],
    ...optionalRow('Fan-out', describeFanOut(rule.target, rule.trigger.type)),
    ['Infrastructure', INFRASTRUCTURE_LABELS[rule.infrastructureType]],
    ['Flapping protection', describeFlapping(rule.flapping)],
    ['Action limit', describeLimit(rule.actionLimit)],
  ];
  if (action.type === 'script' || action.type === 'cli') rows.push(['Timeout', seconds(action.timeoutSeconds ?? 300)]);
  return (
    <section className="panel">
      <h2>Settings</h2>
      <Definitions items={rows} />
      {runbook ? (
        <>
          <h3>
            Runbook <span className="muted">{'interpreter' in runbook ? (runbook.interpreter ?? 'sh') : ''}</span>
          </h3>
          {runbook.script ? <pre className="runbook">{runbook.script}</pre> : null}
          {runbook.notes ? <p className="runbook-notes">{runbook.notes}</p> : null}
        </>
      ) : null}
    </section>
  );
}
