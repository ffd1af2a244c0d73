import { useNavigate, useParams } from 'react-router';
import { Can } from '../auth/useRole';
import type { Integration } from '../api/integration-types';
import { ConfirmedAction } from '../ui/ConfirmedAction';
import { PageHeader } from '../ui/PageHeader';
import { Loadable } from '../ui/states';
import { Time } from '../ui/Time';
import { GraphsPanel } from './GraphsPanel';
import { ImportPanel } from './ImportPanel';
import { IntegrationUrl } from './IntegrationUrl';
import { MonascaPanel } from './MonascaPanel';
import { useDeleteIntegration, useIntegration } from './queries';
import { RecentAlerts } from './RecentAlerts';
import { SampleCurl } from './SampleCurl';
import { TestAlert } from './TestAlert';
import { SetupSteps, TOOLS } from './tools';

export default function IntegrationPage() {
  const { id = '' } = useParams();
  const integration = useIntegration(id);
  return <Loadable query={integration} what="the integration">{(data) => <IntegrationView integration={data} />}</Loadable>;
}

function IntegrationView({ integration }: { integration: Integration }) {
  const { status } = integration;
  return (
    <>
      <PageHeader
        title={integration.name}
        subtitle={
          <span>
            {TOOLS[integration.type].title} · last alert <Time iso={status.lastAlertAt} />
          </span>
        }
        actions={<Can do="configure"><DeleteIntegration integration={integration} /></Can>}
      />
      {status.lastError ? (
        <p className="banner banner-error" role="status">
          <span>
            <strong>
              The last delivery was refused (<Time iso={status.lastErrorAt} />):
            </strong>{' '}
            {status.lastError}
          </span>
        </p>
      ) : null}
      <div className="columns">
        <section className="panel">
          <h2>Set up {TOOLS[integration.type].title}</h2>
          <IntegrationUrl integration={integration}>{(url) => <SetupSteps type={integration.type} url={url} />}</IntegrationUrl>
          <SampleCurl integration={integration} />
        </section>
        <div>
          <Can do="operate"><TestAlert integration={integration} /></Can>
          {integration.type === 'monasca' ? <Can do="configure"><MonascaPanel integration={integration} /></Can> : null}
        </div>
      </div>
      <GraphsPanel integration={integration} />
      <ImportPanel integration={integration} />
      <RecentAlerts integrationId={integration.id} />
    </>
  );
}

function DeleteIntegration({ integration }: { integration: Integration }) {
  const remove = useDeleteIntegration();
  const navigate = useNavigate();
  return (
    <ConfirmedAction
      label="Delete"
      buttonClassName="button button-danger-quiet"
      title={`Delete “${integration.name}”?`}
      confirmLabel="Delete integration"
      mutation={remove}
      onConfirm={() => remove.mutate(integration.id, { onSuccess: () => void navigate('/integrations', { replace: true }) })}
    >
      <p>
        <strong>Its URL stops taking alerts</strong> (the tool gets 404) and the rules on it stop firing. The events already recorded stay on
        their rules.
      </p>
    </ConfirmedAction>
  );
}
