import { Link } from 'react-router';
import type { Candidate } from '../api/incident-types';
import { Can } from '../auth/useRole';
import { Loadable } from '../ui/states';
import { useAnalyticsFilters } from './filters';
import { useCandidates } from './queries';

/** Where the one-click automation opens the rule wizard, filled in from the candidate (rules/wizard/automation.ts). */
export function automateUrl(candidate: Pick<Candidate, 'integrationId' | 'alarmName'>, period: { from?: string; to?: string }): string {
  const query = new URLSearchParams({ automate: '1', integrationId: candidate.integrationId, alarmName: candidate.alarmName });
  if (period.from) query.set('from', period.from);
  if (period.to) query.set('to', period.to);
  return `/rules/new?${query.toString()}`;
}

/**
 * The alarms worth automating (GET /incidents/candidates): frequent, slow to resolve, and no
 * enabled rule acts on them, the most incident time first, each with why; one click opens the
 * rule wizard filled in for it.
 */
export function CandidatesSection() {
  const { filters } = useAnalyticsFilters();
  const candidates = useCandidates(filters);
  return (
    <section className="dashboard-section" aria-labelledby="candidates">
      <h2 id="candidates">Worth automating</h2>
      <Loadable
        query={candidates}
        what="the automation candidates"
        isEmpty={(data) => data.items.length === 0}
        empty={<p className="muted">No alarm of an integration fired at least 3 times in this period, took 5 minutes or more to resolve on average and has no rule acting on it.</p>}
      >
        {(data) => (
          <ol className="plain-list" aria-label="automation candidates">
            {data.items.map((candidate) => (
              <li key={`${candidate.integrationId}\n${candidate.alarmName}`} className="candidate" data-candidate={candidate.alarmName}>
                <div>
                  <strong>{candidate.alarmName}</strong>
                  {candidate.typicalHostname ? <span className="muted"> · mostly on {candidate.typicalHostname}</span> : null}
                  <p className="candidate-why">
                    {candidate.why}
                    {candidate.suggestion.starterRunbook ? `. Suggested: ${candidate.suggestion.starterRunbook.name} (${candidate.suggestion.starterRunbook.why}).` : '.'}
                  </p>
                </div>
                <Can do="configure">
                  <Link className="button button-primary" to={automateUrl(candidate, filters)}>
                    Automate
                  </Link>
                </Can>
              </li>
            ))}
          </ol>
        )}
      </Loadable>
    </section>
  );
}
