import { Link } from 'react-router';
import type { CloudAction, Rule } from '../api/types';
import { useCredentials } from '../credentials/queries';
import { Definitions, optionalRow, type Definition } from '../ui/Definitions';
import { seconds } from '../ui/format';
import { RuleRunbook } from './RuleRunbook';
import { describeAction, describeCloudAction, describeCloudWait, describeFanOut, describeFlapping, describeLimit, describeTarget, limitUnitOf, describeTrigger, INFRASTRUCTURE_LABELS } from './describe';

export function RuleSettings({ rule }: { rule: Rule }) {
  const { action } = rule;
  const rows: Definition[] = [
    ['Trigger', describeTrigger(rule.trigger)],
    ...(action.type === 'cloud'
      ? cloudRows(rule, action)
      : ([['Action', describeAction(action)], ['Target', describeTarget(rule.target, rule.trigger.type)], ...optionalRow('Fan-out', describeFanOut(rule.target, rule.trigger.type))] satisfies Definition[])),
    ...(action.type === 'cli' ? ([['Credentials', <CliCredentials ids={action.credentialIds ?? []} />]] satisfies Definition[]) : []),
    ['Infrastructure', INFRASTRUCTURE_LABELS[rule.infrastructureType]],
    ['Flapping protection', describeFlapping(rule.flapping)],
    ['Action limit', describeLimit(rule.actionLimit, limitUnitOf(action.type))],
  ];
  if (action.type === 'script' || action.type === 'cli') rows.push(['Timeout', seconds(action.timeoutSeconds ?? 300)]);
  return (
    <section className="panel">
      <h2>Settings</h2>
      <Definitions items={rows} />
      <RuleRunbook action={action} />
    </section>
  );
}

function cloudRows(rule: Rule, action: CloudAction): Definition[] {
  return [
    ['Action', <CloudActionWords rule={rule} action={action} />],
    ['Wait', describeCloudWait(action)],
  ];
}

/** A CLI runbook's credentials, each named and linked. */
function CliCredentials({ ids }: { ids: string[] }) {
  const credentials = useCredentials();
  if (ids.length === 0) return <span className="muted">none: the runbook has no cloud identity</span>;
  return (
    <span data-cli-credentials>
      {ids.map((id, i) => (
        <span key={id}>
          {i > 0 ? ', ' : null}
          <Link to={`/credentials/${id}`}>{credentials.data?.items.find((c) => c.id === id)?.name ?? id}</Link>
        </span>
      ))}
    </span>
  );
}

/** The cloud action in words, its credential named and linked. */
function CloudActionWords({ rule, action }: { rule: Rule; action: CloudAction }) {
  const credentials = useCredentials();
  const credential = credentials.data?.items.find((c) => c.id === action.credentialId);
  return (
    <span data-cloud-action>
      {describeCloudAction(action, rule.infrastructureType, credential?.name)}
      {credential ? (
        <>
          {' '}
          <Link to={`/credentials/${credential.id}`} className="h2-link">
            view credential
          </Link>
        </>
      ) : null}
    </span>
  );
}
