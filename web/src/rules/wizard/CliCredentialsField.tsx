import { Link } from 'react-router';
import { PROVIDERS, type Provider } from '../../api/credential-types';
import { PROVIDER_INFO } from '../../credentials/providers';
import { useCredentials } from '../../credentials/queries';
import type { StepProps } from './step';

/**
 * The credentials a CLI runbook gets, at most one per provider (each CLI reads one set of
 * variables): one choice per provider that has any stored. docs/cli-machine.md lists the variables.
 */
export function CliCredentialsField({ form, update, errors }: StepProps) {
  const credentials = useCredentials();
  const all = credentials.data?.items ?? [];
  const chosenOf = (provider: Provider) => all.find((credential) => credential.provider === provider && form.credentialIds.includes(credential.id))?.id ?? '';
  const choose = (provider: Provider, id: string) => {
    const others = form.credentialIds.filter((chosen) => all.find((credential) => credential.id === chosen)?.provider !== provider);
    update({ credentialIds: id ? [...others, id] : others });
  };
  const providers = PROVIDERS.filter((provider) => all.some((credential) => credential.provider === provider));
  return (
    <fieldset className="choices" aria-describedby="cli-credentials-hint">
      <legend>Credentials the runbook gets</legend>
      {credentials.isError ? <p className="field-error">could not list the credentials: reload to try again</p> : null}
      {providers.map((provider) => (
        <label key={provider} className="field">
          <span className="field-label">{PROVIDER_INFO[provider].title}</span>
          <select aria-label={`${PROVIDER_INFO[provider].title} credential`} value={chosenOf(provider)} onChange={(event) => choose(provider, event.target.value)}>
            <option value="">none</option>
            {all
              .filter((credential) => credential.provider === provider)
              .map((credential) => (
                <option key={credential.id} value={credential.id}>
                  {credential.name}
                </option>
              ))}
          </select>
        </label>
      ))}
      {errors.credentialIds ? <p className="field-error">{errors.credentialIds}</p> : null}
      <p className="field-hint" id="cli-credentials-hint">
        {credentials.isSuccess && providers.length === 0 ? 'No credential is stored yet: the runbook runs with no cloud identity. ' : null}
        Each arrives in its CLI&rsquo;s own variables (AWS_ACCESS_KEY_ID…, AZURE_CLIENT_ID…, a GCP key file, OS_*), and its values are masked in the
        output.{' '}
        <Link to="/credentials" target="_blank" rel="noopener">
          Store a credential
        </Link>{' '}
        (opens in a new tab).
      </p>
    </fieldset>
  );
}
