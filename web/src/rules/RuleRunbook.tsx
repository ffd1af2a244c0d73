import { Link } from 'react-router';
import type { Action, RepositoryRunbookRef, StoredRunbookRef } from '../api/types';
import { useRepositories } from '../repositories/queries';
import { Sha256 } from '../runbooks/RunbookFacts';
import { isInRepository } from './wizard/runbook-form';

/** The runbook a rule runs: written into it, a stored runbook (followed or pinned, and the version a run takes now), or a repository's file. */
export function RuleRunbook({ action }: { action: Action }) {
  if (action.type === 'script' || action.type === 'cli' || action.type === 'email_runbook') {
    if ('runbookId' in action.runbook) return <StoredRunbook runbook={action.runbook} />;
  }
  if ((action.type === 'script' || action.type === 'cli') && isInRepository(action.runbook)) return <RepositoryFile runbook={action.runbook} />;
  if (!('runbook' in action)) return null;
  const { runbook } = action;
  return (
    <>
      <h3>
        Runbook <span className="muted">{'interpreter' in runbook ? (runbook.interpreter ?? 'sh') : ''}</span>
      </h3>
      {'script' in runbook && runbook.script ? <pre className="runbook">{runbook.script}</pre> : null}
      {'sha256' in runbook && runbook.sha256 ? (
        <p className="muted">
          SHA-256 <Sha256 value={runbook.sha256} />
        </p>
      ) : null}
      {'notes' in runbook && runbook.notes ? <p className="runbook-notes">{runbook.notes}</p> : null}
    </>
  );
}

function StoredRunbook({ runbook }: { runbook: StoredRunbookRef }) {
  const now = runbook.resolvedVersion;
  return (
    <>
      <h3>Runbook</h3>
      <p data-rule-runbook>
        <Link to={`/runbooks/${runbook.runbookId}`} className="strong-link">
          {runbook.name ?? runbook.runbookId}
        </Link>
        {runbook.version === undefined ? `, following its latest version${now ? `: version ${now} runs now` : ''}` : `, pinned to version ${runbook.version}`}
        {now ? (
          <>
            {' · '}
            <Link to={`/runbooks/${runbook.runbookId}/versions/${now}`}>read version {now}</Link>
          </>
        ) : null}
      </p>
      {runbook.sha256 ? (
        <p className="muted">
          SHA-256 <Sha256 value={runbook.sha256} />
        </p>
      ) : null}
    </>
  );
}

function RepositoryFile({ runbook }: { runbook: RepositoryRunbookRef }) {
  const repositories = useRepositories();
  const repository = repositories.data?.items.find((r) => r.id === runbook.repositoryId);
  return (
    <>
      <h3>
        Runbook <span className="muted">{runbook.interpreter ?? 'sh'}</span>
      </h3>
      <p data-rule-runbook>
        <span className="mono">{runbook.path}</span> in{' '}
        <Link to={`/repositories/${runbook.repositoryId}`} className="strong-link">
          {repository?.name ?? runbook.repositoryId}
        </Link>{' '}
        at <span className="mono">{runbook.ref ?? repository?.ref ?? 'its own ref'}</span>
        {runbook.ref ? null : <span className="muted"> (the repository&rsquo;s)</span>}
        <span className="muted">, fetched before each run</span>
      </p>
    </>
  );
}
