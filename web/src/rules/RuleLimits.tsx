import { Link } from 'react-router';
import type { ActionLimit, HostLimitUsage, Rule } from '../api/types';
import { EscalationBadge, LimitedBadge } from '../ui/Badge';
import { seconds } from '../ui/format';
import { Loadable } from '../ui/states';
import { Time } from '../ui/Time';
import { describeLimit, limitUnitOf, type LimitUnit } from './describe';
import { useRuleLimits } from './queries';
import { TableScroll } from '../ui/TableScroll';

/**
 * The rule's action limit as it stands now: how much of it each host has used, and who was told.
 * A rule without a limit has no card (its settings say "none").
 */
export function RuleLimits({ rule }: { rule: Rule }) {
  if (!rule.actionLimit) return null;
  const per = limitUnitOf(rule.action.type);
  return (
    <section className="panel" aria-labelledby="limits-heading">
      <h2 id="limits-heading">Action limit per {per}</h2>
      <LimitUsage ruleId={rule.id} limit={rule.actionLimit} per={per} />
    </section>
  );
}

function LimitUsage({ ruleId, limit, per }: { ruleId: string; limit: ActionLimit; per: LimitUnit }) {
  const usage = useRuleLimits(ruleId);
  return (
    <>
      <p className="muted">
        {describeLimit(limit, per)}. Counted over the last {seconds(limit.windowSeconds)}, every execution however it ended. {atTheLimit(limit, per)}
      </p>
      <Loadable
        query={usage}
        what="limit usage"
        isEmpty={(data) => data.hosts.length === 0}
        empty={
          <p data-limit-usage="none">
            <strong>No {per} has used the limit</strong> <span className="muted">in the window: the next alarm acts on any {per}.</span>
          </p>
        }
      >
        {(data) => <UsageTable hosts={data.hosts} onLimit={limit.onLimit} />}
      </Loadable>
    </>
  );
}

/** What reaching the limit does: the Escalations card shows only once there is one. */
function atTheLimit(limit: ActionLimit, per: LimitUnit): string {
  // A run by the service at its limit is recorded, never escalated (describeLimit says so).
  if (per !== 'host') return '';
  if (limit.onLimit === 'drop') return 'This rule drops the alarms past its limit (outcome limited) and tells nobody.';
  return 'Past it, the alarms that cannot act are escalated to a person, once per host and window.';
}

function UsageTable({ hosts, onLimit }: { hosts: HostLimitUsage[]; onLimit: ActionLimit['onLimit'] }) {
  return (
    <TableScroll>
      <table className="table">
        <thead>
          <tr>
            <th>Host</th>
            <th>Used</th>
            <th>Now</th>
            <th>Next slot frees</th>
            <th>Open escalation</th>
          </tr>
        </thead>
        <tbody>
          {hosts.map((host) => (
            <tr key={host.hostId ?? `service:${host.hostname}`} data-host={host.hostname}>
              <td className="mono strong">{host.hostname}</td>
              <td>
                <UsageMeter used={host.used} max={host.max} />
              </td>
              <td>{host.limited ? <LimitedBadge onLimit={onLimit} /> : <span className="muted">{host.remaining} left</span>}</td>
              <td>{host.nextSlotAt ? <Time iso={host.nextSlotAt} /> : <span className="muted">–</span>}</td>
              <td>
                {host.escalation ? (
                  <span className="cell-pair">
                    <EscalationBadge state={host.escalation.state} />
                    <Link to={`/rules/${host.escalation.ruleId}?outcome=limited`}>
                      {host.escalation.limitedEvents} limited {host.escalation.limitedEvents === 1 ? 'event' : 'events'}
                    </Link>
                    <span className="muted">
                      window closes <Time iso={host.escalation.windowEnd} />
                    </span>
                  </span>
                ) : (
                  <span className="muted">none</span>
                )}
              </td>
            </tr>
          ))}
        </tbody>
      </table>
    </TableScroll>
  );
}

function UsageMeter({ used, max }: { used: number; max: number }) {
  const full = used >= max;
  return (
    <span className="usage">
      <span className="usage-bar" aria-hidden="true">
        <span className={`usage-fill${full ? ' usage-full' : ''}`} style={{ width: `${Math.min(100, (used / max) * 100)}%` }} />
      </span>
      <span className="mono">
        {used} / {max}
      </span>
    </span>
  );
}
