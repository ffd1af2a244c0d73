import { Link, useNavigate, useParams } from 'react-router';
import { Can } from '../auth/useRole';
import type { Rule } from '../api/types';
import { ExecutionsTable } from '../executions/ExecutionsTable';
import { useExecutions } from '../executions/queries';
import { SnapshotFigure, useRuleSnapshots } from '../executions/Snapshots';
import { ConfirmedAction } from '../ui/ConfirmedAction';
import { PagedList } from '../ui/PagedList';
import { PageHeader } from '../ui/PageHeader';
import { EmptyState, Loadable } from '../ui/states';
import { useDeleteRule, useRule } from './queries';
import { RuleEscalations } from './RuleEscalations';
import { RuleEvents } from './RuleEvents';
import { RuleLimits } from './RuleLimits';
import { SchedulePanel } from './SchedulePanel';
import { RuleSettings } from './RuleSettings';
import { RuleToggle } from './RuleToggle';
import { RunNow } from './RunNow';
import { WebhookPanel } from './WebhookPanel';

export default function RulePage() {
  const { id = '' } = useParams();
  const rule = useRule(id);
  return <Loadable query={rule} what="the rule">{(data) => <RuleView rule={data} />}</Loadable>;
}

function RuleView({ rule }: { rule: Rule }) {
  const scheduled = rule.trigger.type === 'cron';
  return (
    <>
      <PageHeader
        title={rule.name}
        subtitle={
          <span className="title-with-badge">
            <RuleToggle rule={rule} /> {rule.enabled ? (scheduled ? 'On: runs on its schedule' : 'On: actions run when it fires') : scheduled ? 'Off: paused' : 'Off'}
          </span>
        }
        actions={
          <>
            <Can do="operate">
              <RunNow rule={rule} />
            </Can>
            <Can do="configure">
              <Link to={`/rules/${rule.id}/edit`} className="button">
                Edit
              </Link>
              <DeleteRule rule={rule} />
            </Can>
          </>
        }
      />
      {rule.enabled ? null : scheduled ? (
        <p className="banner banner-warn" role="status">
          This rule is paused. It has no ticks, and nothing runs or is recorded for them, until you turn it on; it then starts from the next tick.
        </p>
      ) : (
        <p className="banner banner-warn" role="status">
          This rule is off. Alarms are still recorded (outcome <code>rule_off</code>); no action runs until you turn it on.
        </p>
      )}
      <div className="columns">
        <WebhookPanel trigger={rule.trigger} />
        <SchedulePanel rule={rule} />
        <RuleSettings rule={rule} />
      </div>
      <RuleLimits rule={rule} />
      <RuleEscalations rule={rule} />
      <RuleEvents ruleId={rule.id} triggerType={rule.trigger.type} />
      <RuleSnapshots ruleId={rule.id} />
      <RuleExecutions ruleId={rule.id} />
    </>
  );
}

/** The pictures the rule's latest captures took: shown only once it has captured some. */
function RuleSnapshots({ ruleId }: { ruleId: string }) {
  const snapshots = useRuleSnapshots(ruleId, LATEST_SNAPSHOTS);
  const items = snapshots.data?.items ?? [];
  if (items.length === 0) return null;
  return (
    <section className="panel" aria-label="Latest graph snapshots">
      <h2>Latest graph snapshots</h2>
      <ul className="snapshot-list snapshot-grid">
        {items.map((snapshot) => (
          <li key={snapshot.id}>
            <SnapshotFigure snapshot={snapshot} linkExecution />
          </li>
        ))}
      </ul>
    </section>
  );
}

const LATEST_SNAPSHOTS = 4;

function RuleExecutions({ ruleId }: { ruleId: string }) {
  const executions = useExecutions({ ruleId }, 20);
  return (
    <section className="panel">
      <h2>
        Executions <Link to={`/executions?rule=${ruleId}`} className="h2-link">all</Link>
      </h2>
      <PagedList query={executions} what="executions" empty={<EmptyState title="No executions yet">An accepted event queues one execution per target host.</EmptyState>}>
        {(items) => <ExecutionsTable executions={items} showRule={false} />}
      </PagedList>
    </section>
  );
}

function DeleteRule({ rule }: { rule: Rule }) {
  const remove = useDeleteRule();
  const navigate = useNavigate();
  return (
    <ConfirmedAction
      label="Delete"
      buttonClassName="button button-danger-quiet"
      title={`Delete “${rule.name}”?`}
      confirmLabel="Delete rule"
      mutation={remove}
      onConfirm={() => remove.mutate(rule.id, { onSuccess: () => void navigate('/rules', { replace: true }) })}
    >
      <p>
        Its webhook URL stops answering (404) and it never runs again. Its recorded events and executions stay readable. To pause it
        instead, turn it off.
      </p>
    </ConfirmedAction>
  );
}
