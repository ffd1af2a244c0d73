import { useState, type FormEvent } from 'react';
import type { Integration, IntegrationInput, IntegrationType } from '../api/integration-types';
import { EditableBy } from '../auth/useRole';
import { Field } from '../ui/Field';
import { SaveOutcome } from '../ui/states';
import { useUpdateIntegration } from './queries';

/** The tools whose graphs are read at an address of the integration, with a graph secret (docs/graph-snapshots.md). */
const GRAPH_TOOLS: Partial<Record<IntegrationType, { tool: string; address: string; example: string; secret: string; required: boolean }>> = {
  alertmanager: { tool: 'Prometheus', address: 'prometheusUrl', example: 'http://prometheus:9090', secret: 'a bearer token, or {"username": …, "password": …} for a proxy in front of Prometheus (else the import’s secret)', required: false },
  grafana: { tool: 'Grafana', address: 'grafanaUrl', example: 'https://grafana.example.com', secret: 'a service account token (glsa_…) with the Viewer role', required: true },
};

/** Where pitcrew reads the tool's graphs for graph snapshots, and the write-only secret it reads them with. */
export function GraphsPanel({ integration }: { integration: Integration }) {
  const graphs = GRAPH_TOOLS[integration.type];
  if (!graphs) return null;
  return (
    <section className="panel" aria-label="Graphs">
      <h2>Graphs</h2>
      <p>
        Graph snapshots read {graphs.tool}’s graphs at this address, never at one an alert names, with {graphs.secret}
        {graphs.required ? '' : ', if it asks for one'}.
      </p>
      <EditableBy do="configure">
        <GraphsForm integration={integration} graphs={graphs} />
      </EditableBy>
    </section>
  );
}

function GraphsForm({ integration, graphs }: { integration: Integration; graphs: NonNullable<(typeof GRAPH_TOOLS)[IntegrationType]> }) {
  const current = integration.config[graphs.address];
  const [address, setAddress] = useState(typeof current === 'string' ? current : '');
  const [secret, setSecret] = useState('');
  const update = useUpdateIntegration(integration.id);
  const save = (event: FormEvent) => {
    event.preventDefault();
    const config = { ...integration.config, [graphs.address]: address.trim() === '' ? undefined : address.trim() };
    update.mutate({ config, ...(secret.trim() === '' ? {} : { graphSecret: graphSecretOf(secret.trim()) }) }, { onSuccess: () => setSecret('') });
  };
  return (
    <form onSubmit={save} aria-label="graph settings">
      <Field label={`${graphs.tool} address`} hint={`e.g. ${graphs.example}`}>
        <input type="url" value={address} onChange={(event) => setAddress(event.target.value)} placeholder={graphs.example} />
      </Field>
      <Field label="Graph secret" hint={integration.hasGraphSecret ? 'A graph secret is set (never shown). Type a new one to replace it.' : 'Write-only: stored encrypted, never shown back.'}>
        <input type="password" value={secret} onChange={(event) => setSecret(event.target.value)} autoComplete="new-password" />
      </Field>
      <div className="inline-form">
        <button type="submit" className="button" disabled={update.isPending}>
          {update.isPending ? 'Saving…' : 'Save graph settings'}
        </button>
        {integration.hasGraphSecret ? (
          <button type="button" className="button button-danger-quiet" disabled={update.isPending} onClick={() => update.mutate({ graphSecret: null })}>
            Remove graph secret
          </button>
        ) : null}
      </div>
      <SaveOutcome mutation={update} saved="Graph settings saved." />
    </form>
  );
}

/** A login typed as JSON is sent as one; anything else is a token. */
function graphSecretOf(text: string): NonNullable<IntegrationInput['graphSecret']> {
  if (!text.startsWith('{')) return text;
  try {
    return JSON.parse(text) as { username: string; password: string };
  } catch {
    return text;
  }
}
