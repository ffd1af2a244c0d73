import { useState, type FormEvent } from 'react';
import { problemAtFields } from '../api/problem';
import { Field } from '../ui/Field';
import { FormBanner } from '../ui/states';
import { useSaveSsoProvider, type RoleMapping, type SsoProvider, type SsoProviderInput } from './queries';

/** What the service asks for when none are given (src/identity/sso/providers.ts). */
const DEFAULT_SCOPES = ['openid', 'email', 'profile'];

type FormField = 'name' | 'issuer' | 'clientId' | 'clientSecret' | 'scopes' | 'metadataXml' | 'roleMapping';

const EXAMPLE_MAPPING: Record<SsoProviderInput['type'], RoleMapping> = {
  oidc: { claim: 'groups', groups: { 'pitcrew-admins': 'admin', 'pitcrew-ops': 'operator' }, default: 'viewer' },
  saml: { attribute: 'groups', values: { 'pitcrew-admins': 'admin' }, default: 'viewer' },
};

/** Adds or edits a provider; the client secret is write-only: blank on edit keeps the stored one. */
export function SsoProviderForm({ provider, onDone }: { provider: SsoProvider | null; onDone: () => void }) {
  const save = useSaveSsoProvider();
  const [type, setType] = useState<SsoProviderInput['type']>(provider?.type ?? 'oidc');
  const [name, setName] = useState(provider?.name ?? '');
  const [issuer, setIssuer] = useState(provider?.issuer ?? '');
  const [clientId, setClientId] = useState(provider?.clientId ?? '');
  const [clientSecret, setClientSecret] = useState('');
  const [scopes, setScopes] = useState((provider?.scopes ?? DEFAULT_SCOPES).join(' '));
  const [metadataXml, setMetadataXml] = useState(provider?.metadataXml ?? '');
  const [mapping, setMapping] = useState(JSON.stringify(provider?.roleMapping ?? EXAMPLE_MAPPING.oidc, null, 2));
  const [jit, setJit] = useState(provider?.jit ?? true);
  const [required, setRequired] = useState(provider?.required ?? false);
  const [errors, setErrors] = useState<Partial<Record<FormField, string>>>({});
  const [banner, setBanner] = useState<string | null>(null);

  const submit = (event: FormEvent) => {
    event.preventDefault();
    let roleMapping: RoleMapping;
    try {
      roleMapping = JSON.parse(mapping) as RoleMapping;
    } catch {
      return setErrors({ roleMapping: 'this is not JSON: see the examples below the field' });
    }
    const common = { type, name: name.trim(), roleMapping, jit, required };
    const input: SsoProviderInput =
      type === 'oidc' ? { ...common, issuer: issuer.trim(), clientId: clientId.trim(), scopes: scopes.split(/\s+/).filter(Boolean), ...(clientSecret ? { clientSecret } : {}) } : { ...common, metadataXml };
    setErrors({});
    setBanner(null);
    save.mutate({ id: provider?.id ?? null, input }, {
      onSuccess: onDone,
      onError: (problem) => {
        const placed = problemAtFields<FormField>(problem, (path) => fieldOf(path));
        setErrors(placed.errors);
        setBanner(placed.banner);
      },
    });
  };

  return (
    <form className="panel" onSubmit={submit} noValidate aria-label={provider ? `Edit ${provider.name}` : 'New provider'}>
      <FormBanner banner={banner} />
      {provider ? null : (
        <Field label="Type">
          <select
            value={type}
            onChange={(event) => {
              const next = event.target.value as SsoProviderInput['type'];
              setType(next);
              setMapping(JSON.stringify(EXAMPLE_MAPPING[next], null, 2));
            }}
          >
            <option value="oidc">OpenID Connect</option>
            <option value="saml">SAML 2.0</option>
          </select>
        </Field>
      )}
      <Field label="Name" error={errors.name} hint="On the sign-in button: “Continue with …”.">
        <input value={name} onChange={(event) => setName(event.target.value)} placeholder="Okta" />
      </Field>
      {type === 'oidc' ? (
        <>
          <Field label="Issuer" error={errors.issuer} hint="https://accounts.google.com, https://YOUR.okta.com, https://login.microsoftonline.com/TENANT/v2.0, https://KEYCLOAK/realms/REALM">
            <input value={issuer} onChange={(event) => setIssuer(event.target.value)} spellCheck={false} />
          </Field>
          <Field label="Client id" error={errors.clientId}>
            <input value={clientId} onChange={(event) => setClientId(event.target.value)} spellCheck={false} autoComplete="off" />
          </Field>
          <Field
            label="Client secret"
            error={errors.clientSecret}
            hint={provider?.clientSecretSet ? 'A secret is stored; leave blank to keep it. It is never shown again.' : 'Stored sealed and never shown again; leave blank for a public client (PKCE only).'}
          >
            <input type="password" value={clientSecret} onChange={(event) => setClientSecret(event.target.value)} autoComplete="new-password" />
          </Field>
          <Field label="Scopes" error={errors.scopes} hint="Separated by spaces; add groups where the provider gives the group claim only for that scope (Okta, Keycloak).">
            <input value={scopes} onChange={(event) => setScopes(event.target.value)} spellCheck={false} />
          </Field>
        </>
      ) : (
        <Field label="Identity provider metadata (XML)" error={errors.metadataXml}>
          <textarea rows={6} value={metadataXml} onChange={(event) => setMetadataXml(event.target.value)} spellCheck={false} />
        </Field>
      )}
      <Field
        label="Role mapping (JSON)"
        error={errors.roleMapping}
        hint={
          <>
            By e-mail domain: <code>{'{"domains": {"example.com": "operator"}}'}</code>; by group claim: <code>{'{"claim": "groups", "groups": {"ops": "operator"}, "default": "viewer"}'}</code>;
            SAML: <code>{'{"attribute": "groups", "values": {"ops": "operator"}}'}</code>. A person no entry names is refused.
          </>
        }
      >
        <textarea rows={6} value={mapping} onChange={(event) => setMapping(event.target.value)} spellCheck={false} className="mono" />
      </Field>
      <label className="checkbox">
        <input type="checkbox" checked={jit} onChange={(event) => setJit(event.target.checked)} /> Create a user at their first sign-in (otherwise only members of the tenant)
      </label>
      <label className="checkbox">
        <input type="checkbox" checked={required} onChange={(event) => setRequired(event.target.checked)} /> Require single sign-on: password sign-in is off for this tenant
      </label>
      <div className="form-actions">
        <button type="submit" className="button button-primary" disabled={save.isPending}>
          {save.isPending ? 'Saving…' : provider ? 'Save' : 'Add provider'}
        </button>
        <button type="button" className="button" onClick={onDone}>
          Cancel
        </button>
      </div>
    </form>
  );
}

function fieldOf(path: string): FormField | undefined {
  const field = path.split('/')[2];
  return field && ['name', 'issuer', 'clientId', 'clientSecret', 'scopes', 'metadataXml', 'roleMapping'].includes(field) ? (field as FormField) : undefined;
}
