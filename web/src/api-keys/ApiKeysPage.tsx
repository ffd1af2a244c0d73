import { useState, type FormEvent } from 'react';
import { messageOf } from '../api/problem';
import type { ApiKey, IssuedApiKey } from '../api/types';
import { ConfirmedAction } from '../ui/ConfirmedAction';
import { Field } from '../ui/Field';
import { PageHeader } from '../ui/PageHeader';
import { EmptyState, Loadable } from '../ui/states';
import { Time } from '../ui/Time';
import { useApiKeys, useIssueApiKey, useRevokeApiKey } from './queries';
import { RevealKey } from './RevealKey';

export default function ApiKeysPage() {
  const keys = useApiKeys();
  const [issued, setIssued] = useState<IssuedApiKey | null>(null);
  return (
    <>
      <PageHeader title="API keys" subtitle="Tenant keys authenticate webhook calls and agent enrolment. The management token you signed in with is not one of them." />
      <IssueKeyForm onIssued={setIssued} />
      <Loadable
        query={keys}
        what="API keys"
        isEmpty={(data) => data.items.length === 0}
        empty={<EmptyState title="No API keys">Issue one above: webhooks and agents need it.</EmptyState>}
      >
        {(data) => <KeysTable keys={data.items} onIssued={setIssued} />}
      </Loadable>
      <RevealKey issued={issued} onClose={() => setIssued(null)} />
    </>
  );
}

function IssueKeyForm({ onIssued }: { onIssued: (key: IssuedApiKey) => void }) {
  const issue = useIssueApiKey();
  const [name, setName] = useState('');
  const [error, setError] = useState<string | undefined>();
  const submit = (event: FormEvent) => {
    event.preventDefault();
    if (!name.trim()) return setError('name the key after what will use it: “nagios”, “agents eu-west”');
    setError(undefined);
    issue.mutate(name.trim(), {
      onSuccess: (key) => {
        setName('');
        onIssued(key);
      },
      onError: (problem) => setError(messageOf(problem)),
    });
  };
  return (
    <form className="inline-form panel" onSubmit={submit} noValidate>
      <Field label="New key name" error={error}>
        <input value={name} onChange={(event) => setName(event.target.value)} placeholder="nagios" autoComplete="off" maxLength={200} />
      </Field>
      <button type="submit" className="button button-primary" disabled={issue.isPending}>
        {issue.isPending ? 'Issuing…' : 'Issue key'}
      </button>
    </form>
  );
}

function KeysTable({ keys, onIssued }: { keys: ApiKey[]; onIssued: (key: IssuedApiKey) => void }) {
  const names = new Map(keys.map((key) => [key.id, key.hint]));
  return (
    <table className="table">
      <thead>
        <tr>
          <th>Name</th>
          <th>Key</th>
          <th>Issued</th>
          <th>Last used</th>
          <th>Status</th>
          <th aria-label="actions" />
        </tr>
      </thead>
      <tbody>
        {keys.map((key) => (
          <tr key={key.id} className={key.revokedAt ? 'row-off' : undefined} data-key={key.name}>
            <td className="strong">{key.name}</td>
            <td className="mono">…{key.hint}</td>
            <td>
              <Time iso={key.createdAt} />
            </td>
            <td>
              <Time iso={key.lastUsedAt} />
            </td>
            <td>
              {key.revokedAt ? (
                <span className="muted">
                  revoked <Time iso={key.revokedAt} />
                  {key.replacedBy ? ` · replaced by …${names.get(key.replacedBy) ?? ''}` : ''}
                </span>
              ) : (
                'active'
              )}
            </td>
            <td>{key.revokedAt ? null : <RevokeKey apiKey={key} onIssued={onIssued} />}</td>
          </tr>
        ))}
      </tbody>
    </table>
  );
}

function RevokeKey({ apiKey, onIssued }: { apiKey: ApiKey; onIssued: (key: IssuedApiKey) => void }) {
  const revoke = useRevokeApiKey();
  return (
    <ConfirmedAction
      label="Revoke and regenerate"
      buttonClassName="link-button link-danger"
      title={`Revoke “${apiKey.name}” (…${apiKey.hint})?`}
      confirmLabel="Revoke and issue a new key"
      mutation={revoke}
      onConfirm={(close) =>
        revoke.mutate(apiKey.id, {
          onSuccess: (key) => {
            close();
            onIssued(key);
          },
        })
      }
    >
      <p>
        <strong>The key stops working at once:</strong> webhook calls and agent enrolments that use it are refused (401) from the next request
        on. Agents already enrolled keep their own credential and stay connected.
      </p>
      <p>A new key named “{apiKey.name}” is issued and shown once. Put it in every webhook URL and agent configuration that used the old one.</p>
    </ConfirmedAction>
  );
}
