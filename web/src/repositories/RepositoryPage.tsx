import { Link, useNavigate, useParams } from 'react-router';
import { Can } from '../auth/useRole';
import type { Repository } from '../api/repository-types';
import { ConfirmedAction } from '../ui/ConfirmedAction';
import { Definitions, optionalRow } from '../ui/Definitions';
import { LastTest } from '../ui/LastTest';
import { PageHeader } from '../ui/PageHeader';
import { Loadable } from '../ui/states';
import { Time } from '../ui/Time';
import { useDeleteRepository, useRepository, useRulesReading } from './queries';
import { RepositoryFilesPanel } from './RepositoryFilesPanel';
import { RepositorySettings } from './RepositorySettings';
import { AUTH_LABELS } from './repository-form';
import { TestRepository } from './TestRepository';

export default function RepositoryPage() {
  const { id = '' } = useParams();
  const repository = useRepository(id);
  return <Loadable query={repository} what="the repository">{(data) => <RepositoryView key={data.id} repository={data} />}</Loadable>;
}

function RepositoryView({ repository }: { repository: Repository }) {
  return (
    <>
      <PageHeader
        title={repository.name}
        subtitle={
          <>
            <Link to="/repositories">Repositories</Link> · git, read-only
          </>
        }
        actions={<Can do="configure"><DeleteRepository repository={repository} /></Can>}
      />
      <div className="columns">
        <section className="panel">
          <h2>Where it is</h2>
          <Definitions
            items={[
              ['URL', <span className="mono">{repository.url}</span>],
              ['Ref', <span className="mono">{repository.ref}</span>],
              ['Credential', AUTH_LABELS[repository.auth]],
              ...optionalRow('Known hosts', repository.knownHosts ? <pre className="known-hosts">{repository.knownHosts}</pre> : null),
              ['Last test', <LastTest test={repository.lastTest} />],
              ['Connected', <Time iso={repository.createdAt} />],
              ['Changed', <Time iso={repository.updatedAt} />],
              ['Used by', <UsedBy repositoryId={repository.id} />],
            ]}
          />
        </section>
        <Can do="operate"><TestRepository repository={repository} /></Can>
      </div>
      <RepositoryFilesPanel repository={repository} />
      <Can do="configure"><RepositorySettings repository={repository} /></Can>
    </>
  );
}

function UsedBy({ repositoryId }: { repositoryId: string }) {
  const rules = useRulesReading(repositoryId);
  if (!rules.data) return <span className="muted">…</span>;
  if (rules.data.length === 0) return <span className="muted">no rule yet</span>;
  return (
    <span data-used-by>
      {rules.data.map((rule, i) => (
        <span key={rule.id}>
          {i > 0 ? ', ' : ''}
          <Link to={`/rules/${rule.id}`}>{rule.name}</Link>
        </span>
      ))}
    </span>
  );
}

function DeleteRepository({ repository }: { repository: Repository }) {
  const remove = useDeleteRepository();
  const navigate = useNavigate();
  return (
    <ConfirmedAction
      label="Delete"
      buttonClassName="button button-danger-quiet"
      title={`Delete “${repository.name}”?`}
      confirmLabel="Delete repository"
      mutation={remove}
      onConfirm={() => remove.mutate(repository.id, { onSuccess: () => void navigate('/repositories', { replace: true }) })}
    >
      <p>
        <strong>Its sealed credential is gone for good,</strong> with pitcrew&rsquo;s copy of its commits. The service refuses while a rule reads its
        runbook from it: point those rules elsewhere, or delete them, first. The repository itself is not touched.
      </p>
    </ConfirmedAction>
  );
}
