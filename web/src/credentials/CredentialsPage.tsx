import { Link, useSearchParams } from 'react-router';
import { Can } from '../auth/useRole';
import { PROVIDERS, type Provider } from '../api/credential-types';
import { LastTest } from '../ui/LastTest';
import { PageHeader } from '../ui/PageHeader';
import { EmptyState, Loadable } from '../ui/states';
import { AddCredential } from './AddCredential';
import { PROVIDER_INFO, summaryRows } from './providers';
import { useCredentials } from './queries';

/** The tenant's cloud credentials: what identifies each and its last test, never a secret. */
export default function CredentialsPage() {
  const credentials = useCredentials();
  // The wizard links here with ?provider= so the form starts on the cloud the rule needs.
  const [params] = useSearchParams();
  const asked = params.get('provider');
  const initialProvider = PROVIDERS.includes(asked as Provider) ? (asked as Provider) : undefined;
  return (
    <>
      <PageHeader
        title="Credentials"
        subtitle="Keys to the tenant’s cloud accounts, for rules with a cloud action. Secrets are write-only: stored encrypted, never shown again."
      />
      <Loadable
        query={credentials}
        what="credentials"
        isEmpty={(data) => data.items.length === 0}
        empty={
          <EmptyState title="No credential yet">
            <p>
              Store AWS access keys, an Azure service principal, a Google Cloud service account key or an OpenStack application credential below; rules
              then start, stop, reboot or terminate instances with it. Give it only the permissions its rules need (docs/credentials.md).
            </p>
          </EmptyState>
        }
      >
        {(data) => (
          <table className="table credentials-table">
            <thead>
              <tr>
                <th>Credential</th>
                <th>Provider</th>
                <th>Identifies</th>
                <th>Last test</th>
              </tr>
            </thead>
            <tbody>
              {data.items.map((credential) => (
                <tr key={credential.id} data-credential={credential.name}>
                  <td>
                    <Link to={`/credentials/${credential.id}`} className="strong-link">
                      {credential.name}
                    </Link>
                  </td>
                  <td>{PROVIDER_INFO[credential.provider].title}</td>
                  <td className="cell-summary">
                    {summaryRows(credential.summary).map(([label, value]) => (
                      <div key={label}>
                        <span className="muted">{label}</span> <span className="mono">{value}</span>
                      </div>
                    ))}
                  </td>
                  <td className="cell-reason">
                    <LastTest test={credential.lastTest} />
                  </td>
                </tr>
              ))}
            </tbody>
          </table>
        )}
      </Loadable>
      <Can do="configure"><AddCredential key={initialProvider} initialProvider={initialProvider} /></Can>
    </>
  );
}
