import { Link } from 'react-router';
import type { Incident } from '../api/incident-types';
import { Can } from '../auth/useRole';
import { ExpandableRow, useOpenRow } from '../ui/ExpandableRow';
import { absoluteTime, relativeTime } from '../ui/format';
import { PagedList } from '../ui/PagedList';
import { EmptyState } from '../ui/states';
import { TableScroll } from '../ui/TableScroll';
import { useNow } from '../ui/useNow';
import { FixNow } from './FixNow';
import { SeverityBadge } from './IncidentBadges';
import { useIncidents } from './queries';
import { TroubleshootPanel } from './TroubleshootPanel';
import { WhatPitcrewDid } from './WhatPitcrewDid';

/** The open incidents, newest first, refreshed every two seconds; Troubleshoot now opens under its row. */
export function OpenIncidents() {
  const incidents = useIncidents('open');
  return (
    <section aria-labelledby="open-incidents">
      <h2 id="open-incidents">Open incidents</h2>
      <PagedList
        query={incidents}
        what="open incidents"
        empty={
          <EmptyState title="No open incident">
            <p>
              Alarms your monitoring tools send (<Link to="/integrations">integrations</Link>) or import open incidents here, whether or not a rule acts on them.
            </p>
          </EmptyState>
        }
      >
        {(items) => <IncidentsTable incidents={items} />}
      </PagedList>
    </section>
  );
}

function IncidentsTable({ incidents }: { incidents: Incident[] }) {
  const now = useNow(1000);
  const { open: troubleshooting, toggle } = useOpenRow();
  return (
    <TableScroll>
      <table className="table incidents-table">
        <thead>
          <tr>
            <th>Alarm</th>
            <th>Host</th>
            <th>Severity</th>
            <th>Age</th>
            <th className="num">Firings</th>
            <th>What pitcrew did</th>
            <th>
              <span className="sr-only">Actions</span>
            </th>
          </tr>
        </thead>
        <tbody>
          {incidents.map((incident) => (
            <ExpandableRow
              key={incident.id}
              open={troubleshooting === incident.id}
              detail={<TroubleshootPanel incident={incident} />}
              columns={7}
              detailClassName="incident-panel"
            >
              <tr data-incident={incident.id}>
                <td>
                  <Link to={`/incidents/${incident.id}`}>{incident.alarmName}</Link>
                </td>
                <td className="mono">{incident.hostname ?? <span className="muted">–</span>}</td>
                <td>
                  <SeverityBadge severity={incident.severity} />
                </td>
                <td title={`opened ${absoluteTime(incident.openedAt)}`}>
                  <span className="incident-age">{relativeTime(incident.openedAt, now).replace(' ago', '')}</span>
                </td>
                <td className="num">{incident.occurrences}</td>
                <td>
                  <WhatPitcrewDid incident={incident} />
                </td>
                <td className="row-actions">
                  <Can do="operate">
                    <button
                      type="button"
                      className="button"
                      aria-expanded={troubleshooting === incident.id}
                      onClick={() => toggle(incident.id)}
                    >
                      Troubleshoot now
                    </button>
                    <FixNow incident={incident} />
                  </Can>
                </td>
              </tr>
            </ExpandableRow>
          ))}
        </tbody>
      </table>
    </TableScroll>
  );
}
