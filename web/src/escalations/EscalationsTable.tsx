import { Link } from 'react-router';
import type { Escalation } from '../api/types';
import { RuleLink } from '../rules/RuleLink';
import { EscalationBadge } from '../ui/Badge';
import { Time } from '../ui/Time';
import { useNow } from '../ui/useNow';
import { TableScroll } from '../ui/TableScroll';

/** Escalations, one a row: which host, how many alarms went without action, and why. */
export function EscalationsTable({ escalations, showRule = true }: { escalations: Escalation[]; showRule?: boolean }) {
  const now = useNow();
  return (
    <TableScroll>
      <table className="table">
        <thead>
          <tr>
            <th>State</th>
            {showRule ? <th>Rule</th> : null}
            <th>Host</th>
            <th className="num">Limited events</th>
            <th>Window</th>
            <th>Reason</th>
          </tr>
        </thead>
        <tbody>
          {escalations.map((escalation) => (
            <tr key={escalation.id} data-escalation={escalation.id}>
              <td>
                <EscalationBadge state={escalation.state} />
              </td>
              {showRule ? (
                <td>
                  <RuleLink ruleId={escalation.ruleId} />
                </td>
              ) : null}
              <td className="mono">{escalation.hostname}</td>
              <td className="num">
                <Link to={`/rules/${escalation.ruleId}?outcome=limited`} title="the alarms that did not act">
                  {escalation.limitedEvents}
                </Link>
              </td>
              <td>
                <span className="cell-pair">
                  opened <Time iso={escalation.windowStart} /> · {Date.parse(escalation.windowEnd) > now ? 'closes' : 'closed'} <Time iso={escalation.windowEnd} />
                </span>
              </td>
              <td className="cell-reason">{escalation.reason}</td>
            </tr>
          ))}
        </tbody>
      </table>
    </TableScroll>
  );
}
