import { Link } from 'react-router';
import { Can } from '../auth/useRole';
import type { RunbookSummary } from '../api/runbook-types';
import { INTERPRETER_LABELS } from '../rules/describe';
import { PagedList } from '../ui/PagedList';
import { PageHeader } from '../ui/PageHeader';
import { SearchBox, useUrlSearch } from '../ui/SearchBox';
import { EmptyState, NoMatch } from '../ui/states';
import { Time } from '../ui/Time';
import { EnvNames } from './RunbookFacts';
import { StarterLibrary } from './StarterLibrary';
import { useRunbooks } from './queries';

/** The tenant's runbooks, each at its latest version; every save of one is kept as a version. */
export default function RunbooksPage() {
  const search = useUrlSearch('q');
  const runbooks = useRunbooks(search.settled || undefined);
  return (
    <>
      <PageHeader
        title="Runbooks"
        subtitle="Scripts with notes for people, kept in versions: every save is a new version, and rules run the latest or the one they pin."
        actions={
          <>
            <Link to="/repositories" className="button">
              Git repositories
            </Link>
            <Can do="configure">
              <Link to="/runbooks/new" className="button button-primary">
                New runbook
              </Link>
            </Can>
          </>
        }
      />
      <div className="toolbar" role="search">
        <SearchBox label="Search runbooks by name" placeholder="Search runbooks by name" search={search} />
      </div>
      <PagedList
        query={runbooks}
        what="runbooks"
        empty={
          search.settled ? (
            <NoMatch what="runbook" onClear={() => search.change('')} />
          ) : (
            <EmptyState title="No runbook yet">
              <p>
                A runbook is the script a rule runs and the notes people read when it fires. Write one, or install one of the starter library below, then
                pick it in a rule&rsquo;s runbook step; each save is kept, so you can see what changed and which version ran.
              </p>
              <Can do="configure">
                <Link to="/runbooks/new" className="button button-primary">
                  Write a runbook
                </Link>
              </Can>
            </EmptyState>
          )
        }
      >
        {(items) => (
          <>
            <p className="list-summary">
              {items.length} {items.length === 1 ? 'runbook' : 'runbooks'}
              {runbooks.hasNextPage ? ' so far' : ''}
            </p>
            <RunbooksTable runbooks={items} />
          </>
        )}
      </PagedList>
      <Can do="configure"><StarterLibrary /></Can>
    </>
  );
}

function RunbooksTable({ runbooks }: { runbooks: RunbookSummary[] }) {
  return (
    <table className="table">
      <thead>
        <tr>
          <th>Runbook</th>
          <th className="num">Version</th>
          <th>Interpreter</th>
          <th>Expects</th>
          <th>SHA-256</th>
          <th>Last saved</th>
        </tr>
      </thead>
      <tbody>
        {runbooks.map((runbook) => (
          <tr key={runbook.id} data-runbook={runbook.name}>
            <td>
              <Link to={`/runbooks/${runbook.id}`} className="strong-link">
                {runbook.name}
              </Link>
            </td>
            <td className="num">{runbook.version}</td>
            <td>{INTERPRETER_LABELS[runbook.interpreter]}</td>
            <td>{runbook.env.length === 0 ? <span className="muted">–</span> : <EnvNames names={runbook.env} />}</td>
            <td className="mono" title={runbook.sha256}>
              {runbook.sha256.slice(0, 12)}
            </td>
            <td>
              <Time iso={runbook.updatedAt} />
            </td>
          </tr>
        ))}
      </tbody>
    </table>
  );
}
