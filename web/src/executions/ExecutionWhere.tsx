import type { Execution } from '../api/types';

// What the service names an email runbook's host when the alarm named none (actions/email-runbook).
const NO_HOST = '(service)';

/**
 * Where an execution ran: its host, the instance a cloud action acted on, or the service itself
 * for an email runbook, which has no host (its hostname is the host the alarm was about, when there is one).
 */
export function ExecutionWhere({ execution }: { execution: Pick<Execution, 'actionType' | 'hostname'> }) {
  // A cloud action's execution is one instance, called by the service: its hostname is the instance id.
  if (execution.actionType === 'cloud') return <span><span className="muted">instance</span> <span className="mono">{execution.hostname}</span></span>;
  if (execution.actionType !== 'email_runbook') return <span className="mono">{execution.hostname}</span>;
  return (
    <span>
      service · email runbook
      {execution.hostname === NO_HOST ? null : <span className="muted"> for {execution.hostname}</span>}
    </span>
  );
}
