import { useState, type FormEvent } from 'react';
import { Can } from '../auth/useRole';
import { messageOf } from '../api/problem';
import type { ApiKey, IssuedApiKey } from '../api/types';
import { RadioChoices } from '../ui/RadioChoices';
import { ConfirmedAction } from '../ui/ConfirmedAction';
import { Field } from '../ui/Field';
import { PageHeader } from '../ui/PageHeader';
import { RevokedOrActive } from '../ui/RevokedOrActive';
import { EmptyState, Loadable } from '../ui/states';
import { Time } from '../ui/Time';
import { useApiKeys, useIssueApiKey, useRevokeApiKey } from './queries';
import { RevealKey } from './RevealKey';
import { hasBothScopes, KeyScopes, PURPOSE_SCOPES, type KeyPurpose } from './ScopeParts';

const PURPOSES = [
  { value: 'webhook', title: 'Webhooks', text: 'for a monitoring tool: the key goes in its webhook URLs' },
  { value: 'enrol', title: 'Agents', text: 'enrols agents on your hosts (PITCREW_API_KEY)' },
  { value: 'both', title: 'Both', text: 'not advised: whoever reads a webhook URL could enrol a host' },
] as const;

export default function ApiKeysPage() {
  const keys = useApiKeys();
  const [issued, setIssued] = useState<IssuedApiKey | null>(null);
  return (
    <>
      <PageHeader
        title="API keys"
        subtitle="Tenant keys authenticate webhook calls (scope webhook) and agent enrolment (scope enrol). The management token you signed in with is not one of them."
      />
      <Can do="configure"><IssueKeyForm onIssued={setIssued} /></Can>
      {keys.data ? <BothScopesNote keys={keys.data.items} /> : null}
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
  const [purpose, setPurpose] = useState<KeyPurpose>('webhook');
  const [error, setError] = useState<string | undefined>();
  const submit = (event: FormEvent) => {
    event.preventDefault();
    if (!name.trim()) return setError('name the key after what will use it: “nagios”, “agents eu-west”');
    setError(undefined);
    issue.mutate({ name: name.trim(), scopes: PURPOSE_SCOPES[purpose] }, {
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
      <RadioChoices legend="The key is for" choices={PURPOSES} value={purpose} onChange={setPurpose} layout="choices-three" />
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
          <th>Scopes</th>
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
              <KeyScopes apiKey={key} />
            </td>
            <td>
              <Time iso={key.createdAt} />
            </td>
            <td>
              <Time iso={key.lastUsedAt} />
            </td>
            <td>
              <RevokedOrActive revokedAt={key.revokedAt}>{key.replacedBy ? ` · replaced by …${names.get(key.replacedBy) ?? ''}` : ''}</RevokedOrActive>
            </td>
            <td>{key.revokedAt ? null : <Can do="configure"><RevokeKey apiKey={key} onIssued={onIssued} /></Can>}</td>
          </tr>
        ))}
      </tbody>
    </table>
  );
}

/** Keys made before scopes existed have both: say what that risks, and that each can be narrowed. */
function BothScopesNote({ keys }: { keys: ApiKey[] }) {
  const both = keys.filter((key) => !key.revokedAt && hasBothScopes(key));
  if (both.length === 0) return null;
  return (
    <p className="banner banner-warn" role="note">
      <strong>
        {both.length === 1 ? '1 key' : `${both.length} keys`} can both fire webhooks and enrol agents
      </strong>{' '}
      ({both.map((key) => `“${key.name}”`).join(', ')}). Keys made before scopes existed, and the bootstrap key, keep both until you narrow them:
      whoever reads a webhook URL holding such a key could enrol a machine under one of your host names. Narrow each to what uses it.
    </p>
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
      <p>
        A new key named “{apiKey.name}” is issued and shown once, with the same scopes ({apiKey.scopes.join(' and ')}). Put it in every webhook URL and
        agent configuration that used the old one.
      </p>
    </ConfirmedAction>
  );
}
