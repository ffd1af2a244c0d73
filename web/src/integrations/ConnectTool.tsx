import { useState, type FormEvent } from 'react';
import { useNavigate } from 'react-router';
import { INTEGRATION_TYPES, type IntegrationType } from '../api/integration-types';
import { mutationProblem } from '../api/problem';
import { Field } from '../ui/Field';
import { FormBanner } from '../ui/states';
import { useCreateIntegration } from './queries';
import { TOOLS } from './tools';

/** Names a new integration and picks its tool; its page then gives the URL and the steps. */
export function ConnectTool() {
  const [name, setName] = useState('');
  const [type, setType] = useState<IntegrationType>('alertmanager');
  const [secret, setSecret] = useState('');
  const create = useCreateIntegration();
  const navigate = useNavigate();
  const { errors, banner } = mutationProblem(create, fieldOf);
  const submit = (event: FormEvent) => {
    event.preventDefault();
    create.mutate(
      { name: name.trim(), type, ...(secret ? { secret } : {}) },
      { onSuccess: (made) => void navigate(`/integrations/${made.id}`) },
    );
  };
  const secretLabel = TOOLS[type].secret;
  return (
    <section className="panel">
      <h2>Connect a monitoring tool</h2>
      <form onSubmit={submit} className="form-grid" aria-label="connect a monitoring tool">
        <Field label="Name" hint="How the tool is known here, e.g. “prometheus-eu”." error={errors.name}>
          <input value={name} onChange={(event) => setName(event.target.value)} required maxLength={200} autoComplete="off" />
        </Field>
        <Field label="Tool" hint={TOOLS[type].text}>
          <select value={type} onChange={(event) => setType(event.target.value as IntegrationType)}>
            {INTEGRATION_TYPES.map((value) => (
              <option key={value} value={value}>
                {TOOLS[value].title}
              </option>
            ))}
          </select>
        </Field>
        {secretLabel ? (
          <Field label={secretLabel} hint="Write-only: stored encrypted, never shown again." error={errors.secret}>
            <input type="password" value={secret} onChange={(event) => setSecret(event.target.value)} autoComplete="new-password" />
          </Field>
        ) : null}
        <FormBanner banner={banner} />
        <div>
          <button type="submit" className="button button-primary" disabled={create.isPending || !name.trim()}>
            {create.isPending ? 'Connecting…' : 'Connect'}
          </button>
        </div>
      </form>
    </section>
  );
}

function fieldOf(path: string): 'name' | 'secret' | undefined {
  if (path.startsWith('/body/name')) return 'name';
  if (path.startsWith('/body/secret')) return 'secret';
  return undefined;
}
