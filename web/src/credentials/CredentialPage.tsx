import { Link, useNavigate, useParams } from 'react-router';
import { Can } from '../auth/useRole';
import type { Credential } from '../api/credential-types';
import { ConfirmedAction } from '../ui/ConfirmedAction';
import { Definitions } from '../ui/Definitions';
import { LastTest } from '../ui/LastTest';
import { PageHeader } from '../ui/PageHeader';
import { Loadable } from '../ui/states';
import { Time } from '../ui/Time';
import { CredentialSettings } from './CredentialSettings';
import { PROVIDER_INFO, summaryRows } from './providers';
import { useCredential, useDeleteCredential, useRulesUsing } from './queries';
import { TestCredential } from './TestCredential';

export default function CredentialPage() {
  const { id = '' } = useParams();
  const credential = useCredential(id);
  return <Loadable query={credential} what="the credential">{(data) => <CredentialView key={data.id} credential={data} />}</Loadable>;
}

function CredentialView({ credential }: { credential: Credential }) {
  return (
    <>
      <PageHeader title={credential.name} subtitle={`${PROVIDER_INFO[credential.provider].title} credential`} actions={<DeleteCredential credential={credential} />} />
      <div className="columns">
        <section className="panel">
          <h2>What identifies it</h2>
          <Definitions
            items={[
              ...summaryRows(credential.summary).map(([label, value]): [string, React.ReactNode] => [label, <span className="mono">{value}</span>]),
              ['Last test', <LastTest test={credential.lastTest} />],
              ['Stored', <Time iso={credential.createdAt} />],
              ['Changed', <Time iso={credential.updatedAt} />],
            ]}
          />
          <UsedBy credentialId={credential.id} />
        </section>
        <Can do="operate"><TestCredential credential={credential} /></Can>
      </div>
      <Can do="configure"><CredentialSettings credential={credential} /></Can>
    </>
  );
}

function UsedBy({ credentialId }: { credentialId: string }) {
  const rules = useRulesUsing(credentialId);
  if (!rules.data) return null;
  return (
    <p className="used-by">
      {rules.data.length === 0 ? (
        <span className="muted">No rule acts with it yet.</span>
      ) : (
        <>
          Used by{' '}
          {rules.data.map((rule, i) => (
            <span key={rule.id}>
              {i > 0 ? ', ' : ''}
              <Link to={`/rules/${rule.id}`}>{rule.name}</Link>
            </span>
          ))}
        </>
      )}
    </p>
  );
}

function DeleteCredential({ credential }: { credential: Credential }) {
  const remove = useDeleteCredential();
  const navigate = useNavigate();
  return (
    <ConfirmedAction
      label="Delete"
      buttonClassName="button button-danger-quiet"
      title={`Delete “${credential.name}”?`}
      confirmLabel="Delete credential"
      mutation={remove}
      onConfirm={() => remove.mutate(credential.id, { onSuccess: () => void navigate('/credentials', { replace: true }) })}
    >
      <p>
        <strong>Its sealed secret is gone for good.</strong> The service refuses while a rule acts with it: change those rules to another credential,
        or delete them, first. The keys themselves stay valid at the provider until you revoke them there.
      </p>
    </ConfirmedAction>
  );
}
