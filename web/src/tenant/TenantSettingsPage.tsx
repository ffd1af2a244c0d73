import { PageHeader } from '../ui/PageHeader';
import { Loadable } from '../ui/states';
import { AllowlistForm } from './AllowlistForm';
import { HistoryPanel } from './HistoryPanel';
import { IncidentSettingsForm } from './IncidentSettingsForm';
import { useTenant } from './queries';
import { ThrottleForm } from './ThrottleForm';

/** Who may call the tenant's webhooks and enrol its agents, and how fast: settings shared by all its API keys; how long history is kept. */
export default function TenantSettingsPage() {
  const tenant = useTenant();
  return (
    <>
      <PageHeader title="Tenant settings" subtitle="Who may call your webhooks and enrol agents, and how fast: for every API key of the tenant. When incidents count as automation's or close by themselves. How long history is kept." />
      <Loadable query={tenant} what="the tenant's settings">
        {(data) => (
          <div className="columns">
            <AllowlistForm tenant={data} />
            <AllowlistForm tenant={data} field="agentAllowlist" />
            <ThrottleForm tenant={data} />
            <IncidentSettingsForm tenant={data} />
            <HistoryPanel tenant={data} />
          </div>
        )}
      </Loadable>
    </>
  );
}
