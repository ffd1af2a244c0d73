import { Link } from 'react-router';
import type { Execution } from '../api/types';
import { RuleLink } from '../rules/RuleLink';
import { HeldBadge, StateBadge } from '../ui/Badge';
import { duration } from '../ui/format';
import { Time } from '../ui/Time';
import { useNow } from '../ui/useNow';
import { ExecutionWhere } from './ExecutionWhere';
import { TableScroll } from '../ui/TableScroll';

/** How long it ran, or has been running. */
export function runTime(execution: Pick<Execution, 'startedAt' | 'finishedAt' | 'durationMs'>, now: number): string | null {
  if (execution.durationMs !== null) return duration(execution.durationMs);
  if (execution.startedAt && !execution.finishedAt) return duration(now - Date.parse(execution.startedAt));
  return null;
}

export function ExecutionsTable({ executions, showRule = true }: { executions: Execution[]; showRule?: boolean }) {
  const now = useNow(1000);
  return (
    <TableScroll>
      <table className="table">
        <thead>
          <tr>
            <th>State</th>
            {showRule ? <th>Rule</th> : null}
            <th>Host</th>
            <th>Queued</th>
            <th className="num">Duration</th>
            <th className="num">Exit</th>
            <th>Reason</th>
          </tr>
        </thead>
        <tbody>
          {executions.map((execution) => (
            <tr key={execution.id}>
              <td>
                <Link
                  to={`/executions/${execution.id}`}
                  className="plain-link cell-pair"
                  aria-label={`execution ${execution.id} on ${execution.hostname}: ${execution.state}${execution.held ? ', held' : ''}`}
                >
                  <StateBadge state={execution.state} />
                  {execution.held ? <HeldBadge /> : null}
                </Link>
              </td>
              {showRule ? (
                <td>
                  <RuleLink ruleId={execution.ruleId} />
                </td>
              ) : null}
              <td>
                <Link to={`/executions/${execution.id}`}>
                  <ExecutionWhere execution={execution} />
                </Link>
              </td>
              <td>
                <Time iso={execution.queuedAt} />
              </td>
              <td className="num">{runTime(execution, now) ?? <span className="muted">–</span>}</td>
              <td className="num mono">{execution.exitCode ?? <span className="muted">–</span>}</td>
              <td className="cell-reason">{execution.reason ?? ''}</td>
            </tr>
          ))}
        </tbody>
      </table>
    </TableScroll>
  );
}
