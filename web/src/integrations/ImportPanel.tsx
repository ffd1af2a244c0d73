import { useState, type FormEvent } from 'react';
import type { ImportPatch, Integration } from '../api/integration-types';
import { messageOf } from '../api/problem';
import { Can, EditableBy } from '../auth/useRole';
import { useCredentials } from '../credentials/queries';
import { Field } from '../ui/Field';
import { NamedOptions } from '../ui/Options';
import { SaveOutcome } from '../ui/states';
import { Time } from '../ui/Time';
import { useImportNow, useImports, useUpdateImport } from './queries';

/**
 * The import of the tool's alarms with its read-only credential (docs/incidents-import.md): what
 * it needs, its settings (an admin's; the secret write-only), Import now (an operator's) and the
 * recent imports, refreshed while one runs.
 */
export function ImportPanel({ integration }: { integration: Integration }) {
  const needs = integration.importNeeds;
  if (!needs) {
    return (
      <section className="panel" aria-label="Import">
        <h2>Import</h2>
        <p className="muted">pitcrew does not import alarms from this tool; its alerts arrive by webhook only.</p>
      </section>
    );
  }
  return (
    <section className="panel" aria-label="Import">
      <h2>Import</h2>
      <p>
        pitcrew can import {needs.tool}’s alarms and their history with a read-only credential: it only reads, never writes to {needs.tool}. It
        reads with {needs.secret}.
      </p>
      <EditableBy do="configure">
        <ImportSettingsForm integration={integration} />
      </EditableBy>
      {integration.import ? (
        <Can do="operate">
          <ImportNow integration={integration} />
        </Can>
      ) : null}
      <RecentImports integrationId={integration.id} />
    </section>
  );
}

function ImportSettingsForm({ integration }: { integration: Integration }) {
  const current = integration.import;
  const providers = integration.importNeeds?.credentialProviders ?? [];
  const [enabled, setEnabled] = useState(current?.enabled ?? false);
  const [every, setEvery] = useState(String(current?.intervalSeconds ?? 300));
  const [lookback, setLookback] = useState(String(current?.lookbackDays ?? 30));
  const [credentialId, setCredentialId] = useState(current?.credentialId ?? '');
  const [secret, setSecret] = useState('');
  const update = useUpdateImport(integration.id);
  const credentials = useCredentials();
  const usable = (credentials.data?.items ?? []).filter((credential) => providers.includes(credential.provider));
  const submit = (event: FormEvent) => {
    event.preventDefault();
    const patch: ImportPatch = { enabled, intervalSeconds: Number(every), lookbackDays: Number(lookback) };
    if (providers.length > 0) patch.credentialId = credentialId === '' ? null : credentialId;
    // A secret that reads as JSON (an object of keys, a login) is sent as one; else as the string it is.
    if (secret.trim() !== '') patch.secret = parsedSecret(secret.trim());
    update.mutate(patch, { onSuccess: () => setSecret('') });
  };
  return (
    <form onSubmit={submit} aria-label="import settings">
      <label className="checkbox">
        <input type="checkbox" checked={enabled} onChange={(event) => setEnabled(event.target.checked)} /> Import on a schedule
      </label>
      <Field label="Every (seconds)" hint="10 to 604800; an import can also be run now">
        <input type="number" min={10} max={604800} value={every} onChange={(event) => setEvery(event.target.value)} required />
      </Field>
      <Field label="Look-back (days)" hint="how much history the first import reads (0 to 365)">
        <input type="number" min={0} max={365} value={lookback} onChange={(event) => setLookback(event.target.value)} required />
      </Field>
      {providers.length > 0 ? (
        <Field label="Credential" hint={`a stored ${providers.join(' or ')} credential (Credentials page)`}>
          <select value={credentialId} onChange={(event) => setCredentialId(event.target.value)}>
            <option value="">none</option>
            <NamedOptions items={usable} />
          </select>
        </Field>
      ) : (
        <Field label="Read-only secret" hint={current?.hasSecret ? 'A secret is set (never shown). Type a new one to replace it.' : 'A string, or JSON for keys and logins. Stored encrypted, never shown back.'}>
          <textarea value={secret} onChange={(event) => setSecret(event.target.value)} rows={2} autoComplete="off" spellCheck={false} />
        </Field>
      )}
      <button type="submit" className="button" disabled={update.isPending}>
        {update.isPending ? 'Saving…' : 'Save import settings'}
      </button>
      <SaveOutcome mutation={update} saved="Import settings saved." />
    </form>
  );
}

function parsedSecret(text: string): unknown {
  if (!text.startsWith('{')) return text;
  try {
    return JSON.parse(text) as unknown;
  } catch {
    return text;
  }
}

function ImportNow({ integration }: { integration: Integration }) {
  const run = useImportNow(integration.id);
  return (
    <div className="inline-form">
      <button type="button" className="button" disabled={run.isPending} onClick={() => run.mutate()}>
        Import now
      </button>
      {run.isError ? (
        <p className="banner banner-error" role="alert">
          <span>{messageOf(run.error)}</span>
        </p>
      ) : null}
    </div>
  );
}

function RecentImports({ integrationId }: { integrationId: string }) {
  const imports = useImports(integrationId);
  const items = imports.data?.items ?? [];
  if (items.length === 0) return <p className="muted">No import yet.</p>;
  return (
    <table className="table" aria-label="recent imports">
      <thead>
        <tr>
          <th>State</th>
          <th>Started</th>
          <th>Ended</th>
          <th>Imported</th>
          <th>Error</th>
        </tr>
      </thead>
      <tbody>
        {items.map((run) => (
          <tr key={run.id} data-import-state={run.state}>
            <td>{run.state}</td>
            <td>
              <Time iso={run.startedAt} />
            </td>
            <td>
              <Time iso={run.endedAt ?? null} />
            </td>
            <td>{run.imported}</td>
            <td>{run.error ?? ''}</td>
          </tr>
        ))}
      </tbody>
    </table>
  );
}
