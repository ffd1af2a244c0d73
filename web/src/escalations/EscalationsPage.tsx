import { Link } from 'react-router';
import { ESCALATION_STATES } from '../api/types';
import { RulePicker } from '../rules/RulePicker';
import { PagedList } from '../ui/PagedList';
import { PageHeader } from '../ui/PageHeader';
import { EmptyState, NoMatch } from '../ui/states';
import { SearchBox, useUrlSearch } from '../ui/SearchBox';
import { useUrlFilters } from '../ui/useUrlFilters';
import { EscalationsTable } from './EscalationsTable';
import { useEscalations, type EscalationFilters } from './queries';

// The notifier sends an escalation within seconds (pending → notified), so every state shows by
// default; `state=pending` narrows to those not yet sent.
const ANY_STATE = 'any';
const DEFAULT_STATE = ANY_STATE;

/** Every rule's escalations: the alarms an action limit stopped, waiting for a person. */
export default function EscalationsPage() {
  const { params, set: setParam, clear } = useUrlFilters();
  const host = useUrlSearch('host');
  const ruleId = params.get('rule') ?? '';
  const state = params.get('state') ?? DEFAULT_STATE;
  const filters: EscalationFilters = { ruleId: ruleId || undefined, hostname: host.settled || undefined, state: state === ANY_STATE ? undefined : state };
  const escalations = useEscalations(filters);
  const filtered = Boolean(ruleId || host.settled);

  return (
    <>
      <PageHeader
        title="Escalations"
        subtitle="When a rule reaches its action limit on a host, the alarms it cannot act on are escalated to a person: one escalation per rule, host and window."
      />
      <div className="toolbar" role="search">
        <SearchBox label="Filter by hostname" placeholder="Hostname" search={host} />
        <RulePicker value={ruleId} onChange={(id) => setParam('rule', id)} />
        <select aria-label="State" value={state} onChange={(event) => setParam('state', event.target.value === DEFAULT_STATE ? '' : event.target.value)}>
          {ESCALATION_STATES.map((value) => (
            <option key={value} value={value}>
              {value}
            </option>
          ))}
          <option value={ANY_STATE}>any state</option>
        </select>
      </div>
      <PagedList
        query={escalations}
        what="escalations"
        empty={
          filtered ? (
            <NoMatch what="escalation" onClear={() => { host.reset(); clear(); }} />
          ) : (
            <EmptyState title={state === DEFAULT_STATE ? 'Nothing is waiting for a person' : 'No escalations yet'}>
              <p>
                A rule with an action limit set to escalate raises one when a host reaches the limit. Set limits in each rule's wizard, and see how
                much of them each host has used on <Link to="/rules">the rule's page</Link>.
              </p>
            </EmptyState>
          )
        }
      >
        {(items) => <EscalationsTable escalations={items} />}
      </PagedList>
    </>
  );
}
