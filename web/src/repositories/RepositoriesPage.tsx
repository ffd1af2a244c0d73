import { Link } from 'react-router';
import { Can } from '../auth/useRole';
import { LastTest } from '../ui/LastTest';
import { PageHeader } from '../ui/PageHeader';
import { EmptyState, Loadable } from '../ui/states';
import { AddRepository } from './AddRepository';
import { useRepositories } from './queries';
import { AUTH_LABELS } from './repository-form';

/** The tenant's git repositories that rules read runbooks from: where each is, and its last test; never a secret. */
export default function RepositoriesPage() {
  const repositories = useRepositories();
  return (
    <>
      <PageHeader
        title="Repositories"
        subtitle="Git repositories rules read their runbooks from, read-only, before each run. Tokens and deploy keys are write-only: stored encrypted, never shown again."
      />
      <Loadable
        query={repositories}
        what="repositories"
        isEmpty={(data) => data.items.length === 0}
        empty={
          <EmptyState title="No repository yet">
            <p>
              Connect the repository where your team keeps its runbooks; a rule can then run one of its files, fetched at the branch or tag you name before
              each run, so a merged change runs from the next alert on.
            </p>
          </EmptyState>
        }
      >
        {(data) => (
          <table className="table repositories-table">
            <thead>
              <tr>
                <th>Repository</th>
                <th>URL</th>
                <th>Ref</th>
                <th>Credential</th>
                <th>Last test</th>
              </tr>
            </thead>
            <tbody>
              {data.items.map((repository) => (
                <tr key={repository.id} data-repository={repository.name}>
                  <td>
                    <Link to={`/repositories/${repository.id}`} className="strong-link">
                      {repository.name}
                    </Link>
                  </td>
                  <td className="mono">{repository.url}</td>
                  <td className="mono">{repository.ref}</td>
                  <td>{AUTH_LABELS[repository.auth]}</td>
                  <td className="cell-reason">
                    <LastTest test={repository.lastTest} />
                  </td>
                </tr>
              ))}
            </tbody>
          </table>
        )}
      </Loadable>
      <Can do="configure"><AddRepository /></Can>
    </>
  );
}
