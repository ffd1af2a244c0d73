import { Link } from 'react-router';
import { Can } from '../auth/useRole';
import { PageHeader } from '../ui/PageHeader';
import { EmptyState, Loadable } from '../ui/states';
import { Time } from '../ui/Time';
import { ConnectTool } from './ConnectTool';
import { useIntegrations } from './queries';
import { TOOLS } from './tools';

/** The monitoring tools that send pitcrew their alerts, each at its own URL. */
export default function IntegrationsPage() {
  const integrations = useIntegrations();
  return (
    <>
      <PageHeader
        title="Integrations"
        subtitle="Monitoring tools that send pitcrew their alerts, each in its own format at its own URL. Rules with the trigger “Monitoring alert” act on them."
      />
      <Loadable
        query={integrations}
        what="integrations"
        isEmpty={(data) => data.items.length === 0}
        empty={
          <EmptyState title="No monitoring tool is connected yet">
            <p>
              Connect Alertmanager, Grafana, Monasca, Zabbix, Datadog, PagerDuty, CloudWatch or any tool that posts JSON: the tool needs nothing but
              the URL pitcrew gives, and every alert it sends is recorded here, whether or not a rule acts on it.
            </p>
          </EmptyState>
        }
      >
        {(data) => (
          <table className="table integrations-table">
            <thead>
              <tr>
                <th>Integration</th>
                <th>Tool</th>
                <th>Last alert</th>
                <th>Last error</th>
              </tr>
            </thead>
            <tbody>
              {data.items.map((integration) => (
                <tr key={integration.id} data-integration={integration.name}>
                  <td>
                    <Link to={`/integrations/${integration.id}`} className="strong-link">
                      {integration.name}
                    </Link>
                  </td>
                  <td>{TOOLS[integration.type].title}</td>
                  <td>
                    <Time iso={integration.status.lastAlertAt} />
                  </td>
                  <td className="cell-reason">
                    {integration.status.lastError ? (
                      <>
                        <Time iso={integration.status.lastErrorAt} />: {integration.status.lastError}
                      </>
                    ) : (
                      <span className="muted">none</span>
                    )}
                  </td>
                </tr>
              ))}
            </tbody>
          </table>
        )}
      </Loadable>
      <Can do="configure"><ConnectTool /></Can>
    </>
  );
}
