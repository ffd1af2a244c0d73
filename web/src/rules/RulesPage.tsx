import { Link } from 'react-router';
import { Can } from '../auth/useRole';
import type { Rule, TriggerType } from '../api/types';
import { OutcomeBadge, StateBadge } from '../ui/Badge';
import { LabelOptions } from '../ui/Options';
import { PagedList } from '../ui/PagedList';
import { PageHeader } from '../ui/PageHeader';
import { EmptyState, NoMatch } from '../ui/states';
import { Time } from '../ui/Time';
import { SearchBox, useUrlSearch } from '../ui/SearchBox';
import { useUrlFilters } from '../ui/useUrlFilters';
import { describeAction, describeCloudInstances, describeTarget, describeTrigger, TRIGGER_LABELS } from './describe';
import { useRules, type RuleFilters } from './queries';
import { RuleToggle } from './RuleToggle';
import { TableScroll } from '../ui/TableScroll';

/** The rule dashboard: every rule, what it does, and what last happened on it. */
export default function RulesPage() {
  const { params, set: setParam, clear } = useUrlFilters();
  const search = useUrlSearch('q');
  const state = params.get('state') ?? '';
  const trigger = params.get('trigger') ?? '';
  const filters: RuleFilters = {
    search: search.settled || undefined,
    enabled: state === 'on' ? true : state === 'off' ? false : undefined,
    triggerType: (trigger || undefined) as TriggerType | undefined,
  };
  const rules = useRules(filters);
  const filtered = Boolean(filters.search || state || trigger);

  return (
    <>
      <PageHeader
        title="Rules"
        subtitle="Each rule runs one action when its trigger fires. Every alarm is recorded, even when no action runs."
        actions={
          <Can do="configure">
            <Link to="/rules/new" className="button button-primary">
              New rule <kbd>n</kbd>
            </Link>
          </Can>
        }
      />
      <div className="toolbar" role="search">
        <SearchBox label="Search rules by name" placeholder="Search rules by name" search={search} />
        <select aria-label="On or off" value={state} onChange={(event) => setParam('state', event.target.value)}>
          <option value="">On and off</option>
          <option value="on">On</option>
          <option value="off">Off</option>
        </select>
        <select aria-label="Trigger" value={trigger} onChange={(event) => setParam('trigger', event.target.value)}>
          <option value="">Any trigger</option>
          <LabelOptions labels={TRIGGER_LABELS} />
        </select>
      </div>
      <PagedList
        query={rules}
        what="rules"
        empty={
          filtered ? (
            <NoMatch what="rule" onClear={() => { search.reset(); clear(); }} />
          ) : (
            <EmptyState title="No rules yet">
              <p>A rule runs a runbook on your hosts when a webhook, an alert or a schedule fires.</p>
              <Can do="configure">
                <Link to="/rules/new" className="button button-primary">
                  Create your first rule
                </Link>
              </Can>
            </EmptyState>
          )
        }
      >
        {(shown) => {
          const on = shown.filter((rule) => rule.enabled).length;
          return (
            <>
              <p className="list-summary">
                {shown.length} {shown.length === 1 ? 'rule' : 'rules'}
                {rules.hasNextPage ? ' so far' : ''} · {on} on · {shown.length - on} off
              </p>
              <RulesTable rules={shown} />
            </>
          );
        }}
      </PagedList>
    </>
  );
}

/** A narrow window (CSS: .rules-table) folds trigger, action and target under the rule's name, so the last columns stay in view. */
function RulesTable({ rules }: { rules: Rule[] }) {
  return (
    <TableScroll>
      <table className="table rules-table">
        <thead>
          <tr>
            <th className="col-toggle">On</th>
            <th className="col-wide">Rule</th>
            <th className="col-detail">Trigger</th>
            <th className="col-detail">Action</th>
            <th className="col-detail">Target</th>
            <th>Last event</th>
            <th>Last execution</th>
          </tr>
        </thead>
        <tbody>
          {rules.map((rule) => (
            <tr key={rule.id} className={rule.enabled ? undefined : 'row-off'}>
              <td className="col-toggle">
                <RuleToggle rule={rule} />
              </td>
              <td>
                <Link to={`/rules/${rule.id}`} className="strong-link">
                  {rule.name}
                </Link>
                <div className="rule-summary">
                  {describeTrigger(rule.trigger)} · {describeAction(rule.action)} · {targetWords(rule)}
                </div>
                {rule.enabled ? null : <div className="cell-note">Off: alarms recorded, no action runs</div>}
              </td>
              <td className="col-detail">{describeTrigger(rule.trigger)}</td>
              <td className="col-detail">{describeAction(rule.action)}</td>
              <td className="col-detail">{targetWords(rule)}</td>
              <td>
                {rule.lastEvent ? (
                  <span className="cell-pair">
                    <OutcomeBadge outcome={rule.lastEvent.outcome} /> <Time iso={rule.lastEvent.receivedAt} />
                  </span>
                ) : (
                  <span className="muted">none yet</span>
                )}
              </td>
              <td>
                {rule.lastExecution ? (
                  <Link to={`/executions/${rule.lastExecution.id}`} className="cell-pair plain-link">
                    <StateBadge state={rule.lastExecution.state} /> <span className="muted">{rule.lastExecution.hostname}</span>
                    <Time iso={rule.lastExecution.finishedAt ?? rule.lastExecution.queuedAt} />
                  </Link>
                ) : (
                  <span className="muted">none yet</span>
                )}
              </td>
            </tr>
          ))}
        </tbody>
      </table>
    </TableScroll>
  );
}

function targetWords(rule: Rule): string {
  return rule.action.type === 'cloud' ? describeCloudInstances(rule.action, rule.infrastructureType) : describeTarget(rule.target, rule.trigger.type);
}
