import { useState } from 'react';
import { Link, useParams } from 'react-router';
import type { IncidentDetail } from '../api/incident-types';
import { Can } from '../auth/useRole';
import { ExecutionsTable } from '../executions/ExecutionsTable';
import { useIntegrations } from '../integrations/queries';
import { OutcomeBadge } from '../ui/Badge';
import { ConfirmedAction } from '../ui/ConfirmedAction';
import { Definitions, optionalRow } from '../ui/Definitions';
import { duration } from '../ui/format';
import { PageHeader } from '../ui/PageHeader';
import { EmptyState, Loadable } from '../ui/states';
import { TableScroll } from '../ui/TableScroll';
import { Time } from '../ui/Time';
import { automateUrl } from './CandidatesSection';
import { FixNow } from './FixNow';
import { IncidentStateBadge, ResolvedByBadge, SeverityBadge } from './IncidentBadges';
import { useIncident, useResolveIncident } from './queries';
import { TroubleshootPanel } from './TroubleshootPanel';
import { WhatPitcrewDid } from './WhatPitcrewDid';

export default function IncidentPage() {
  const { id = '' } = useParams();
  const incident = useIncident(id);
  return (
    <Loadable query={incident} what="the incident">
      {(data) => <Incident incident={data} />}
    </Loadable>
  );
}

function Incident({ incident }: { incident: IncidentDetail }) {
  const integrations = useIntegrations();
  const integration = integrations.data?.items.find((i) => i.id === incident.integrationId);
  const [troubleshooting, setTroubleshooting] = useState(false);
  const open = incident.state === 'open';
  return (
    <>
      <PageHeader
        title={
          <span className="title-with-badge">
            {incident.alarmName} <IncidentStateBadge state={incident.state} /> <ResolvedByBadge by={incident.resolvedBy} />
          </span>
        }
        subtitle={
          <>
            <Link to="/incidents">Incidents</Link> · {incident.hostname ? <span className="mono">{incident.hostname}</span> : 'no host named'} ·{' '}
            {integration ? <Link to={`/integrations/${integration.id}`}>{integration.name}</Link> : incident.integrationId ? 'an integration' : 'a webhook call'}
          </>
        }
        actions={
          <span className="row-actions">
            <Can do="operate">
              <button type="button" className="button" aria-expanded={troubleshooting} onClick={() => setTroubleshooting((shown) => !shown)}>
                Troubleshoot now
              </button>
              <FixNow incident={incident} />
              {open ? <ResolveButton id={incident.id} /> : null}
            </Can>
            {incident.integrationId && incident.ruleIds.length === 0 ? (
              <Can do="configure">
                <Link className="button" to={automateUrl({ integrationId: incident.integrationId, alarmName: incident.alarmName }, {})}>
                  Automate this alarm
                </Link>
              </Can>
            ) : null}
          </span>
        }
      />
      <Definitions
        layout="facts"
        items={[
          ['Severity', <SeverityBadge severity={incident.severity} />],
          ['Opened', <Time iso={incident.openedAt} />],
          ['Resolved', incident.resolvedAt ? <Time iso={incident.resolvedAt} /> : '–'],
          ['Resolution', incident.resolutionSeconds === null ? '–' : <span title={`${incident.resolutionSeconds} s`}>{duration(incident.resolutionSeconds * 1000)}</span>],
          ['Firings', String(incident.occurrences)],
          ['What pitcrew did', <WhatPitcrewDid incident={incident} />],
          ...optionalRow('Fingerprint', <span className="mono">{incident.fingerprint}</span>),
        ]}
      />
      {troubleshooting ? (
        <section className="panel" aria-label="troubleshoot now">
          <TroubleshootPanel incident={incident} />
        </section>
      ) : null}
      <section className="panel" aria-labelledby="incident-runs">
        <h2 id="incident-runs">Runs</h2>
        {incident.executions.length === 0 ? <p className="muted">Nothing ran for this incident yet.</p> : <ExecutionsTable executions={incident.executions} />}
      </section>
      <div className="columns">
        <section className="panel" aria-labelledby="incident-events">
          <h2 id="incident-events">Events ({incident.eventCount})</h2>
          {incident.events.length === 0 ? (
            <p className="muted">No rule acted on it yet.</p>
          ) : (
            <TableScroll>
              <table className="table">
                <thead>
                  <tr>
                    <th>Received</th>
                    <th>Source</th>
                    <th>Outcome</th>
                  </tr>
                </thead>
                <tbody>
                  {incident.events.map((event) => (
                    <tr key={event.id}>
                      <td>
                        <Link to={`/rules/${event.ruleId}#event-${event.id}`}>
                          <Time iso={event.receivedAt} />
                        </Link>
                      </td>
                      <td>{event.source === 'troubleshoot' ? 'Troubleshoot now' : event.source}</td>
                      <td>
                        <OutcomeBadge outcome={event.outcome} />
                      </td>
                    </tr>
                  ))}
                </tbody>
              </table>
            </TableScroll>
          )}
        </section>
        <section className="panel" aria-labelledby="incident-alerts">
          <h2 id="incident-alerts">Alerts ({incident.alertCount})</h2>
          {incident.alerts.length === 0 ? (
            <EmptyState title="No alert">
              <p>It was opened by an import or a webhook call.</p>
            </EmptyState>
          ) : (
            <TableScroll>
              <table className="table">
                <thead>
                  <tr>
                    <th>Received</th>
                    <th>State</th>
                    <th>Labels</th>
                  </tr>
                </thead>
                <tbody>
                  {incident.alerts.map((alert) => (
                    <tr key={alert.id}>
                      <td>
                        <Time iso={alert.receivedAt} />
                      </td>
                      <td>{alert.state}</td>
                      <td className="mono">
                        {Object.entries(alert.labels)
                          .map(([name, value]) => `${name}=${value}`)
                          .join(' ')}
                      </td>
                    </tr>
                  ))}
                </tbody>
              </table>
            </TableScroll>
          )}
        </section>
      </div>
    </>
  );
}

function ResolveButton({ id }: { id: string }) {
  const resolve = useResolveIncident();
  return (
    <ConfirmedAction
      label="Resolve"
      buttonClassName="button"
      title="Resolve this incident by hand?"
      confirmLabel="Resolve"
      mutation={resolve}
      onConfirm={(close) => resolve.mutate(id, { onSuccess: close })}
    >
      <p>It is resolved now, by you. The tool’s later resolution changes nothing; its next firing opens a new incident.</p>
    </ConfirmedAction>
  );
}
