import { Link } from 'react-router';
import type { Incident } from '../api/incident-types';
import { useExecution } from '../executions/queries';
import { useRuleNames } from '../rules/queries';
import { StateBadge } from '../ui/Badge';

/** What pitcrew did about an incident: its runs (the last one's state) and the rules that acted. */
export function WhatPitcrewDid({ incident }: { incident: Incident }) {
  const names = useRuleNames();
  const last = incident.executionIds[incident.executionIds.length - 1];
  if (incident.executionCount === 0 && incident.ruleIds.length === 0) return <span className="muted">nothing yet</span>;
  return (
    <span className="cell-pair did">
      {last ? <LastRun executionId={last} /> : null}
      <span>
        {incident.executionCount} {incident.executionCount === 1 ? 'run' : 'runs'}
        {incident.ruleIds.length > 0 ? (
          <>
            {' · '}
            {incident.ruleIds.map((id, i) => (
              <span key={id}>
                {i > 0 ? ', ' : ''}
                <Link to={`/rules/${id}`}>{names.data?.get(id) ?? 'a rule'}</Link>
              </span>
            ))}
          </>
        ) : null}
      </span>
    </span>
  );
}

function LastRun({ executionId }: { executionId: string }) {
  const execution = useExecution(executionId);
  if (!execution.data) return null;
  return (
    <Link to={`/executions/${executionId}`} className="plain-link" aria-label={`last run: ${execution.data.state}`}>
      <StateBadge state={execution.data.state} />
    </Link>
  );
}
