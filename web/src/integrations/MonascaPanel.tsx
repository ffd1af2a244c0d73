import { useState, type FormEvent } from 'react';
import type { Integration, KeystoneLogin } from '../api/integration-types';
import { messageOf } from '../api/problem';
import { Field } from '../ui/Field';
import { ErrorBanner, Loading, SaveOutcome } from '../ui/states';
import { useMonascaCoverage, useMonascaToken, useUpdateIntegration } from './queries';

/**
 * Monasca's side of the integration: a token from Keystone, got here from the user's credentials
 * (the password is used once, never stored), and the alarm definitions that notify pitcrew.
 */
export function MonascaPanel({ integration }: { integration: Integration }) {
  const monascaUrl = typeof integration.config.monascaUrl === 'string' ? integration.config.monascaUrl : undefined;
  const coverage = useMonascaCoverage(integration.id, integration.hasSecret && monascaUrl !== undefined);
  return (
    <section className="panel">
      <h2>Monasca alarm definitions</h2>
      <MonascaUrl integration={integration} current={monascaUrl} />
      <KeystoneToken integration={integration} />
      {!monascaUrl ? (
        <p className="muted">Set the Monasca API URL above to list the alarm definitions.</p>
      ) : !integration.hasSecret ? (
        <p className="muted">Get a token above to list the alarm definitions.</p>
      ) : coverage.isPending ? (
        <Loading what="the alarm definitions" />
      ) : coverage.isError ? (
        <ErrorBanner error={coverage.error} what="the alarm definitions" onRetry={() => void coverage.refetch()} />
      ) : (
        <>
          <p>
            <strong>
              {coverage.data.covered} of {coverage.data.alarmDefinitions.length}
            </strong>{' '}
            alarm definitions notify pitcrew on ALARM
            {coverage.data.notificationMethods.length === 0 ? ': no Webhook notification points at this integration yet (step 2).' : '.'}
          </p>
          <table className="table" aria-label="alarm definitions">
            <thead>
              <tr>
                <th>Alarm definition</th>
                <th>Severity</th>
                <th>On ALARM</th>
                <th>On OK</th>
              </tr>
            </thead>
            <tbody>
              {coverage.data.alarmDefinitions.map((definition) => (
                <tr key={definition.id} data-definition={definition.name} className={definition.onAlarm ? undefined : 'row-off'}>
                  <td>{definition.name}</td>
                  <td>{definition.severity ?? ''}</td>
                  <td>{definition.onAlarm ? 'notifies pitcrew' : 'add the notification'}</td>
                  <td>{definition.onOk ? 'notifies pitcrew' : '—'}</td>
                </tr>
              ))}
            </tbody>
          </table>
        </>
      )}
    </section>
  );
}

function MonascaUrl({ integration, current }: { integration: Integration; current: string | undefined }) {
  const [url, setUrl] = useState(current ?? '');
  const update = useUpdateIntegration(integration.id);
  const submit = (event: FormEvent) => {
    event.preventDefault();
    update.mutate({ config: { ...integration.config, monascaUrl: url.trim() } });
  };
  return (
    <form onSubmit={submit} aria-label="Monasca API URL" className="inline-form">
      <Field label="Monasca API URL" hint="e.g. http://monasca:8070" error={update.isError ? messageOf(update.error) : undefined}>
        <input value={url} onChange={(event) => setUrl(event.target.value)} required autoComplete="off" />
      </Field>
      <button type="submit" className="button" disabled={update.isPending || url.trim() === (current ?? '')}>
        Save
      </button>
    </form>
  );
}

function KeystoneToken({ integration }: { integration: Integration }) {
  const [login, setLogin] = useState<KeystoneLogin>({ version: 'v3', identityUrl: '', username: '', password: '', project: '', userDomainName: 'Default', projectDomainName: 'Default' });
  const token = useMonascaToken(integration.id);
  const set = (patch: Partial<KeystoneLogin>) => setLogin((current) => ({ ...current, ...patch }));
  const submit = (event: FormEvent) => {
    event.preventDefault();
    const { userDomainName, projectDomainName, ...rest } = login;
    token.mutate(login.version === 'v3' ? { ...rest, userDomainName, projectDomainName } : rest, { onSuccess: () => set({ password: '' }) });
  };
  return (
    <details open={!integration.hasSecret}>
      <summary>{integration.hasSecret ? 'A token is set. Get a new one from Keystone' : 'Get a token from Keystone'}</summary>
      <form onSubmit={submit} aria-label="get a token from Keystone">
        <Field label="Keystone API">
          <select value={login.version} onChange={(event) => set({ version: event.target.value as KeystoneLogin['version'] })}>
            <option value="v3">v3 (POST /v3/auth/tokens)</option>
            <option value="v2.0">v2.0 (POST /v2.0/tokens)</option>
          </select>
        </Field>
        <Field label="Identity URL" hint="Keystone's root, e.g. http://keystone:5000">
          <input value={login.identityUrl} onChange={(event) => set({ identityUrl: event.target.value })} required autoComplete="off" />
        </Field>
        <Field label={login.version === 'v3' ? 'Project' : 'Tenant name'}>
          <input value={login.project} onChange={(event) => set({ project: event.target.value })} required autoComplete="off" />
        </Field>
        <Field label="User name">
          <input value={login.username} onChange={(event) => set({ username: event.target.value })} required autoComplete="off" />
        </Field>
        <Field label="Password" hint="Used once to get the token; not stored.">
          <input type="password" value={login.password} onChange={(event) => set({ password: event.target.value })} required autoComplete="off" />
        </Field>
        {login.version === 'v3' ? (
          <>
            <Field label="User domain">
              <input value={login.userDomainName ?? ''} onChange={(event) => set({ userDomainName: event.target.value })} required />
            </Field>
            <Field label="Project domain">
              <input value={login.projectDomainName ?? ''} onChange={(event) => set({ projectDomainName: event.target.value })} required />
            </Field>
          </>
        ) : null}
        <button type="submit" className="button" disabled={token.isPending}>
          {token.isPending ? 'Asking Keystone…' : 'Get token'}
        </button>
      </form>
      <SaveOutcome
        mutation={token}
        saved={
          <>
            <strong>Token stored</strong>
            {token.data?.expiresAt ? `; Keystone says it expires ${new Date(token.data.expiresAt).toLocaleString()}` : ''}.
          </>
        }
      />
    </details>
  );
}
