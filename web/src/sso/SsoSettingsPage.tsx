import { useState } from 'react';
import { useRole } from '../auth/useRole';
import { ConfirmedAction } from '../ui/ConfirmedAction';
import { PageHeader } from '../ui/PageHeader';
import { EmptyState, Loadable } from '../ui/states';
import { useDeleteSsoProvider, useSsoProviders, type SsoProvider } from './queries';
import { SsoProviderForm } from './SsoProviderForm';

/** The tenant's single sign-on providers (owners change them). */
export default function SsoSettingsPage() {
  const providers = useSsoProviders();
  const { can } = useRole();
  const [editing, setEditing] = useState<SsoProvider | 'new' | null>(null);
  return (
    <>
      <PageHeader
        title="Single sign-on"
        subtitle="OpenID Connect (Google-style public providers, or Okta, Entra ID, Keycloak) and SAML 2.0 providers: each is a button on the sign-in page of this tenant."
        actions={
          can('manageSso') && providers.data?.available && editing === null ? (
            <button type="button" className="button button-primary" onClick={() => setEditing('new')}>
              Add a provider
            </button>
          ) : null
        }
      />
      {editing !== null ? <SsoProviderForm provider={editing === 'new' ? null : editing} onDone={() => setEditing(null)} /> : null}
      <Loadable
        query={providers}
        what="single sign-on providers"
        isEmpty={(data) => data.items.length === 0}
        empty={<EmptyState title="No single sign-on provider">{providers.data?.available === false ? 'This service has no single sign-on.' : 'People sign in with their e-mail and password.'}</EmptyState>}
      >
        {(data) => (
          <table className="table">
            <thead>
              <tr>
                <th>Name</th>
                <th>Type</th>
                <th>Issuer or IdP</th>
                <th>Redirect URI to register</th>
                <th>New users</th>
                <th>Password sign-in</th>
                <th aria-label="actions" />
              </tr>
            </thead>
            <tbody>
              {data.items.map((provider) => (
                <tr key={provider.id} data-provider={provider.name}>
                  <td className="strong">{provider.name}</td>
                  <td>{provider.type === 'oidc' ? 'OpenID Connect' : 'SAML 2.0'}</td>
                  <td className="mono">{provider.issuer ?? provider.metadataUrl ?? '—'}</td>
                  <td className="mono">{provider.callbackUrl ?? '—'}</td>
                  <td>{provider.jit ? 'created at first sign-in' : 'members only'}</td>
                  <td>{provider.required ? 'off (SSO required)' : 'on'}</td>
                  <td className="row-actions">
                    <button type="button" className="link-button" onClick={() => window.open(`${provider.startUrl}?test=1`, '_blank', 'noopener')}>
                      Test sign-in
                    </button>
                    {can('manageSso') ? (
                      <>
                        <button type="button" className="link-button" onClick={() => setEditing(provider)}>
                          Edit
                        </button>
                        <DeleteProvider provider={provider} />
                      </>
                    ) : null}
                  </td>
                </tr>
              ))}
            </tbody>
          </table>
        )}
      </Loadable>
    </>
  );
}

function DeleteProvider({ provider }: { provider: SsoProvider }) {
  const remove = useDeleteSsoProvider();
  return (
    <ConfirmedAction
      label="Delete"
      buttonClassName="link-button link-danger"
      title={`Delete “${provider.name}”?`}
      confirmLabel="Delete"
      mutation={remove}
      onConfirm={(close) => remove.mutate(provider.id, { onSuccess: close })}
    >
      <p>Its button leaves the sign-in page. People who signed in with it keep their accounts and can be sent a password link from Users.</p>
    </ConfirmedAction>
  );
}
