import { Link } from 'react-router';
import type { LoggedAlert } from '../api/integration-types';
import type { Outcome } from '../api/types';
import { useRuleNames } from '../rules/queries';
import { OutcomeBadge } from '../ui/Badge';
import { LoadMore } from '../ui/LoadMore';
import { EmptyState, Loadable } from '../ui/states';
import { Time } from '../ui/Time';
import { useIntegrationAlerts } from './queries';
import { TableScroll } from '../ui/TableScroll';

/** Every alert the integration took, newest first, with what it did on each rule it matched. */
export function RecentAlerts({ integrationId }: { integrationId: string }) {
  const alerts = useIntegrationAlerts(integrationId);
  const names = useRuleNames();
  return (
    <section className="panel">
      <h2>Recent alerts</h2>
      <Loadable
        query={alerts}
        what="the alerts"
        isEmpty={(data) => data.pages[0]!.items.length === 0}
        empty={
          <EmptyState title="No alert yet">
            <p>Once the tool sends its first alert, it shows here with what it did, whether or not a rule matched it. Send a test alert to try.</p>
          </EmptyState>
        }
      >
        {(data) => (
          <>
            <TableScroll>
              <table className="table alerts-table" aria-label="recent alerts">
                <thead>
                  <tr>
                    <th>Received</th>
                    <th>Alert</th>
                    <th>Host</th>
                    <th>State</th>
                    <th>What it did</th>
                  </tr>
                </thead>
                <tbody>
                  {data.pages.flatMap((page) => page.items).map((alert) => (
                    <tr key={alert.id} data-alert={alert.alarmName ?? ''}>
                      <td>
                        <Time iso={alert.receivedAt} />
                      </td>
                      <td>
                        {alert.alarmName ?? <span className="muted">unnamed</span>}
                        {alert.source === 'test' ? <span className="badge badge-info">test</span> : null}
                        {alert.severity ? <span className="muted"> · {alert.severity}</span> : null}
                        <Labels alert={alert} />
                      </td>
                      <td>{alert.hostName ?? <span className="muted">none</span>}</td>
                      <td>{alert.state}</td>
                      <td className="cell-reason">
                        {alert.events.length === 0 ? (
                          <span className="muted">no rule matched</span>
                        ) : (
                          alert.events.map((event) => (
                            <div key={event.ruleId}>
                              <Link to={`/rules/${event.ruleId}`}>{names.data?.get(event.ruleId) ?? 'a deleted rule'}</Link>{' '}
                              <OutcomeBadge outcome={event.outcome as Outcome} />
                            </div>
                          ))
                        )}
                      </td>
                    </tr>
                  ))}
                </tbody>
              </table>
            </TableScroll>
            <LoadMore query={alerts} />
          </>
        )}
      </Loadable>
    </section>
  );
}

function Labels({ alert }: { alert: LoggedAlert }) {
  const entries = Object.entries(alert.labels).filter(([name]) => name !== 'alertname');
  if (entries.length === 0) return null;
  return (
    <div className="alert-labels mono" title="labels">
      {entries.map(([name, value]) => `${name}=${value}`).join(' ')}
    </div>
  );
}
