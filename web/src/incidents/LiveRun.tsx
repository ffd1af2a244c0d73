import { Link } from 'react-router';
import { OutputPane } from '../executions/OutputPane';
import { useExecution } from '../executions/queries';
import { isActive } from '../executions/states';
import { useExecutionStream } from '../executions/useExecutionStream';
import { StateBadge } from '../ui/Badge';
import { Loadable } from '../ui/states';

/** One run's state and output, followed live while it runs (GET /executions/{id}/stream), as its page shows them. */
export function LiveRun({ executionId }: { executionId: string }) {
  const execution = useExecution(executionId);
  return (
    <Loadable query={execution} what="the run">
      {(data) => <Followed key={data.id} executionId={data.id} state={data.state} stored={{ stdout: data.stdout, stderr: data.stderr }} hostname={data.hostname} exitCode={data.exitCode} />}
    </Loadable>
  );
}

function Followed({ executionId, state, stored, hostname, exitCode }: { executionId: string; state: Parameters<typeof StateBadge>[0]['state']; stored: { stdout: string; stderr: string }; hostname: string; exitCode: number | null }) {
  const active = isActive(state);
  const live = useExecutionStream(executionId, active);
  const stdout = active ? live.stdout : stored.stdout;
  const stderr = active ? live.stderr : stored.stderr;
  return (
    <section className="live-run" aria-label={`run ${executionId.slice(-8)}`} data-execution={executionId}>
      <p className="live-run-head" role="status">
        <StateBadge state={state} /> on <strong>{hostname}</strong>
        {exitCode !== null ? <span className="muted"> · exit {exitCode}</span> : null} ·{' '}
        <Link to={`/executions/${executionId}`} className="mono">
          {executionId.slice(-8)}
        </Link>
      </p>
      {live.error ? <p className="banner banner-warn">Live output stopped: {live.error}.</p> : null}
      <div className="outputs">
        <OutputPane title="stdout" text={stdout} live={active && live.following} emptyText={active ? 'waiting for output…' : 'no output'} />
        {stderr ? <OutputPane title="stderr" text={stderr} live={active && live.following} emptyText="" /> : null}
      </div>
    </section>
  );
}
