import type { Tenant } from '../api/types';

/** How long the service keeps what happened: the operator's setting, shown so nobody hunts for a run that is gone. */
export function HistoryPanel({ tenant }: { tenant: Tenant }) {
  return (
    <section className="panel" aria-labelledby="history-heading">
      <h2 id="history-heading">History</h2>
      <p className="muted">
        Alarms (events), executions with their output and files, escalations and notifications. Set for the whole service by whoever runs pitcrew
        (<code>PITCREW_RETENTION_DAYS</code>).
      </p>
      <p className="banner banner-info" role="note">
        {tenant.retentionDays === null
          ? 'Kept for ever: nothing is deleted.'
          : `Kept ${tenant.retentionDays} days, then deleted. An execution still under way, and the alarm it came from, stay until it ends.`}
      </p>
    </section>
  );
}
