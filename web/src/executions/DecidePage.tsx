import { Link, useParams, useSearchParams } from 'react-router';
import type { Execution } from '../api/types';
import { StateBadge } from '../ui/Badge';
import { PageHeader } from '../ui/PageHeader';
import { Loadable } from '../ui/states';
import { ApprovalPanel } from './ApprovalPanel';
import { ExecutionRunbook } from './ExecutionRunbook';
import { ExecutionWhere } from './ExecutionWhere';
import { useLinkedExecution, type ApprovalLink } from './queries';

/**
 * Where an approval e-mail's signed link leads (docs/approvals.md, "From the e-mail"). Opening it
 * decides nothing: the signed-in person confirms with Approve or Reject, which post the ordinary
 * routes with their session. Once decided, by anyone, the page shows how it ended.
 */
export default function DecidePage() {
  const { id = '' } = useParams();
  const [params] = useSearchParams();
  const link = { exp: params.get('exp') ?? '', sig: params.get('sig') ?? '' };
  const execution = useLinkedExecution(id, link);
  return (
    <Loadable query={execution} what="the execution this link asks about">
      {(data) => <Decide execution={data} link={link} />}
    </Loadable>
  );
}

function Decide({ execution, link }: { execution: Execution; link: ApprovalLink }) {
  const waiting = execution.state === 'awaiting_approval';
  return (
    <>
      <PageHeader
        title={<span className="title-with-badge">{waiting ? 'Approve or reject' : 'Already decided'}: execution on <ExecutionWhere execution={execution} /> <StateBadge state={execution.state} /></span>}
        subtitle={<Link to={`/executions/${execution.id}`}>Open the execution's page</Link>}
      />
      {waiting ? (
        <ApprovalPanel execution={execution} link={link} />
      ) : (
        <section className="panel" aria-label="outcome">
          <h2>Outcome</h2>
          <p>This link decides nothing any more: the execution is {execution.state.replace('_', ' ')}{execution.reason ? ` (${execution.reason})` : ''}.</p>
        </section>
      )}
      <ExecutionRunbook execution={execution} />
    </>
  );
}
