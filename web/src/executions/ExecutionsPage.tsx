import { Link } from 'react-router';
import { EXECUTION_STATES, type ExecutionState } from '../api/types';
import { RulePicker } from '../rules/RulePicker';
import { PagedList } from '../ui/PagedList';
import { PageHeader } from '../ui/PageHeader';
import { EmptyState, NoMatch } from '../ui/states';
import { SearchBox, useUrlSearch } from '../ui/SearchBox';
import { useUrlFilters } from '../ui/useUrlFilters';
import { ExecutionsTable } from './ExecutionsTable';
import { useExecutions, type ExecutionFilters } from './queries';

export default function ExecutionsPage() {
  const { params, set: setParam, clear } = useUrlFilters();
  const host = useUrlSearch('host');
  const ruleId = params.get('rule') ?? undefined;
  // An event's executions: the link from an event that ran on more hosts than it lists.
  const eventId = params.get('event') || undefined;
  const state = (params.get('state') || undefined) as ExecutionState | undefined;
  const filters: ExecutionFilters = { ruleId, eventId, state, hostname: host.settled || undefined };
  const executions = useExecutions(filters);
  const filtered = Boolean(ruleId || eventId || state || host.settled);

  return (
    <>
      <PageHeader title="Executions" subtitle="Every run of an action on a host, newest first. Open one to follow its output live." />
      <div className="toolbar" role="search">
        <SearchBox label="Filter by hostname" placeholder="Hostname" search={host} />
        <select aria-label="State" value={state ?? ''} onChange={(event) => setParam('state', event.target.value)}>
          <option value="">Any state</option>
          {EXECUTION_STATES.map((value) => (
            <option key={value} value={value}>
              {value.replace('_', ' ')}
            </option>
          ))}
        </select>
        <RulePicker value={ruleId ?? ''} onChange={(id) => setParam('rule', id)} />
        {eventId ? (
          <span className="chip">
            event: <span className="mono">{eventId.slice(-8)}</span>
            <button type="button" className="chip-remove" aria-label="show every event" onClick={() => setParam('event', '')}>
              ×
            </button>
          </span>
        ) : null}
      </div>
      <PagedList
        query={executions}
        what="executions"
        empty={
          filtered ? (
            <NoMatch what="execution" onClear={() => { host.reset(); clear(); }} />
          ) : (
            <EmptyState title="Nothing has run yet">
              <p>
                An execution starts when a rule's trigger fires and a host matches its target. <Link to="/rules">See the rules</Link> and their
                recorded events.
              </p>
            </EmptyState>
          )
        }
      >
        {(items) => <ExecutionsTable executions={items} />}
      </PagedList>
    </>
  );
}
