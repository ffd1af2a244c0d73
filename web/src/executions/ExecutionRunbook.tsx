import { Link } from 'react-router';
import type { Execution, ExecutionRunbook as Runbook } from '../api/types';
import { Sha256 } from '../runbooks/RunbookFacts';
import { CodeBlock } from '../ui/CodeBlock';

/**
 * The script an execution ran and where it came from: a stored runbook's version, a repository's
 * file at a commit, or the script written in the rule; with the SHA-256 the agent checked.
 */
export function ExecutionRunbook({ execution }: { execution: Execution }) {
  const { runbook, script } = execution;
  if (!runbook) return null;
  return (
    <section className="panel">
      <h2>Runbook</h2>
      <p data-execution-runbook>
        <RunbookSource runbook={runbook} ruleId={execution.ruleId} />
      </p>
      {runbook.sha256 ? (
        <p>
          <span className="muted">SHA-256</span> <Sha256 value={runbook.sha256} />
          <span className="muted"> checked before it ran</span>
        </p>
      ) : null}
      {typeof script === 'string' ? (
        <CodeBlock code={script} copyLabel="Copy script" label="script that ran" />
      ) : script === null && runbook.repositoryId ? (
        <p className="muted">Its script is being read from the repository; it shows here once read.</p>
      ) : null}
    </section>
  );
}

/** "runbook disk-cleanup version 3", "ops-runbooks @ 1a2b3c4 (main) runbooks/restart.sh", or the rule's own script. */
function RunbookSource({ runbook, ruleId }: { runbook: Runbook; ruleId: string }) {
  if (runbook.runbookId) {
    const version = runbook.version === undefined ? null : ` version ${runbook.version}`;
    return (
      <>
        runbook{' '}
        <Link to={runbook.version === undefined ? `/runbooks/${runbook.runbookId}` : `/runbooks/${runbook.runbookId}/versions/${runbook.version}`} className="strong-link">
          {runbook.name ?? runbook.runbookId}
          {version}
        </Link>
      </>
    );
  }
  if (runbook.repositoryId) {
    return (
      <>
        <Link to={`/repositories/${runbook.repositoryId}`} className="strong-link">
          {runbook.repositoryName ?? runbook.repositoryId}
        </Link>{' '}
        @ <span className="mono">{runbook.commit ? runbook.commit.slice(0, 7) : 'not read yet'}</span>
        {runbook.ref ? <span className="muted"> ({runbook.ref})</span> : null} <span className="mono">{runbook.path}</span>
      </>
    );
  }
  return (
    <>
      the script written in <Link to={`/rules/${ruleId}`}>the rule</Link>
    </>
  );
}
