import { useState } from 'react';
import { Can } from '../auth/useRole';
import { Link, useParams } from 'react-router';
import { messageOf } from '../api/problem';
import type { Execution } from '../api/types';
import { useRuleNames } from '../rules/queries';
import { ConfirmedAction } from '../ui/ConfirmedAction';
import { HeldBadge, StateBadge } from '../ui/Badge';
import { Definitions } from '../ui/Definitions';
import { absoluteTime, bytes } from '../ui/format';
import { PageHeader } from '../ui/PageHeader';
import { Loadable } from '../ui/states';
import { Time } from '../ui/Time';
import { useNow } from '../ui/useNow';
import { downloadArtifact } from './download';
import { ApprovalPanel } from './ApprovalPanel';
import { ExecutionRunbook } from './ExecutionRunbook';
import { ExecutionWhere } from './ExecutionWhere';
import { runTime } from './ExecutionsTable';
import { OutputPane } from './OutputPane';
import { Snapshots } from './Snapshots';
import { useCancelExecution, useExecution } from './queries';
import { isActive } from './states';
import { useExecutionStream } from './useExecutionStream';

export default function ExecutionPage() {
  const { id = '' } = useParams();
  const execution = useExecution(id);
  return (
    <Loadable query={execution} what="the execution">
      {(data) => <ExecutionDetail key={data.id} execution={data} />}
    </Loadable>
  );
}

function ExecutionDetail({ execution }: { execution: Execution }) {
  const active = isActive(execution.state);
  const live = useExecutionStream(execution.id, active);
  const names = useRuleNames();
  const now = useNow(1000);
  const stdout = active ? live.stdout : execution.stdout;
  const stderr = active ? live.stderr : execution.stderr;
  const ran = runTime(execution, now);

  return (
    <>
      <PageHeader
        title={
          <span className="title-with-badge">
            Execution on <ExecutionWhere execution={execution} /> <StateBadge state={execution.state} />
            {execution.held ? <HeldBadge /> : null}
          </span>
        }
        subtitle={
          <>
            Rule <Link to={`/rules/${execution.ruleId}`}>{names.data?.get(execution.ruleId) ?? execution.ruleId}</Link> ·{' '}
            {execution.actionType === 'email_runbook'
              ? 'the runbook, emailed to on-call by the service'
              : execution.actionType === 'cloud'
                ? `a cloud action, called by the service · timeout ${execution.timeoutSeconds} s`
                : `${execution.flavour} · ${execution.interpreter} · timeout ${execution.timeoutSeconds} s`}
          </>
        }
        actions={active ? <Can do="operate"><CancelButton execution={execution} /></Can> : null}
      />
      <ReasonBanner execution={execution} />
      <ApprovalPanel execution={execution} />
      {live.error ? <p className="banner banner-warn">Live output stopped: {live.error}. The page still refreshes the state.</p> : null}
      <Definitions
        layout="facts"
        items={[
          ['Exit code', <span className="mono">{execution.exitCode ?? (execution.signal ? `signal ${execution.signal}` : '–')}</span>],
          ['Duration', ran ?? '–'],
          ['Queued', <Time iso={execution.queuedAt} />],
          ['Started', <Time iso={execution.startedAt} />],
          ['Finished', execution.finishedAt ? <Time iso={execution.finishedAt} /> : '–'],
          ['Event', <Link to={`/rules/${execution.ruleId}#event-${execution.eventId}`} className="mono">{execution.eventId.slice(-8)}</Link>],
        ]}
      />
      <div className="outputs">
        <OutputPane title="stdout" text={stdout} truncated={execution.stdoutTruncated} live={active && live.following} emptyText={active ? 'waiting for output…' : 'no output'} />
        {active || stderr ? (
          <OutputPane title="stderr" text={stderr} truncated={execution.stderrTruncated} live={active && live.following} emptyText="waiting for output…" />
        ) : null}
      </div>
      <Snapshots snapshots={execution.snapshots ?? []} />
      <ExecutionRunbook execution={execution} />
      <div className="columns">
        <Artifacts execution={execution} />
        <Transitions execution={execution} />
      </div>
    </>
  );
}

/** Why the execution is where it is: held for its turn, stopped by its fan-out, or what ended it. */
function ReasonBanner({ execution }: { execution: Execution }) {
  if (execution.held) {
    return (
      <p className="banner banner-info" role="status">
        <span>
          <strong>Held, waiting for its turn.</strong> {execution.reason} It is sent to the host as soon as another host of the fan-out ends.
        </span>
      </p>
    );
  }
  if (!execution.reason) return null;
  return <p className={`banner ${execution.state === 'succeeded' ? 'banner-info' : 'banner-warn'}`}>{execution.reason}</p>;
}

function CancelButton({ execution }: { execution: Execution }) {
  const cancel = useCancelExecution();
  if (execution.cancelRequested) return <span className="muted">Cancel requested…</span>;
  return (
    <ConfirmedAction
      label="Cancel execution"
      buttonClassName="button button-danger"
      title="Cancel this execution?"
      confirmLabel="Cancel execution"
      mutation={cancel}
      onConfirm={(close) => cancel.mutate(execution.id, { onSuccess: close })}
    >
      <p>
        {execution.state === 'queued' || execution.state === 'awaiting_approval'
          ? 'It has not reached the host yet: it ends now and never runs.'
          : `The agent on ${execution.hostname} kills the script's whole process group. What it already changed on the host stays changed.`}
      </p>
    </ConfirmedAction>
  );
}

function Artifacts({ execution }: { execution: Execution }) {
  const [error, setError] = useState<string | null>(null);
  const artifacts = execution.artifacts ?? [];
  return (
    <section className="panel">
      <h2>Artifacts</h2>
      {error ? <p className="banner banner-error">{error}</p> : null}
      {artifacts.length === 0 ? (
        <p className="muted">{execution.flavour === 'diagnostics' ? 'No files were collected.' : 'Only diagnostics runs collect files (written to $PITCREW_ARTIFACTS).'}</p>
      ) : (
        <ul className="artifact-list">
          {artifacts.map((artifact) => (
            <li key={artifact.id}>
              <button type="button" className="link-button mono" onClick={() => downloadArtifact(execution.id, artifact).catch((e: unknown) => setError(messageOf(e)))}>
                {artifact.name}
              </button>
              <span className="muted">{bytes(artifact.size)}</span>
            </li>
          ))}
        </ul>
      )}
    </section>
  );
}

function Transitions({ execution }: { execution: Execution }) {
  return (
    <section className="panel">
      <h2>History</h2>
      <ol className="timeline">
        {(execution.transitions ?? []).map((transition) => (
          <li key={`${transition.to}-${transition.at}`}>
            <StateBadge state={transition.to as Execution['state']} />
            <span title={absoluteTime(transition.at)}>{new Date(transition.at).toLocaleTimeString()}</span>
            {transition.reason ? <span className="muted">{transition.reason}</span> : null}
            {transition.decidedBy ? <span className="muted">via {transition.decidedBy.via}</span> : null}
          </li>
        ))}
      </ol>
    </section>
  );
}
