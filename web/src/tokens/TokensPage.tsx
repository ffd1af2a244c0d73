import { useState, type FormEvent } from 'react';
import { problemAtFields } from '../api/problem';
import { useMe } from '../auth/me';
import { ROLES, roleAtLeast, type Role } from '../auth/roles';
import { ConfirmedAction } from '../ui/ConfirmedAction';
import { Field } from '../ui/Field';
import { PageHeader } from '../ui/PageHeader';
import { RevealOnce } from '../ui/RevealOnce';
import { RevokedOrActive } from '../ui/RevokedOrActive';
import { PagedList } from '../ui/PagedList';
import { EmptyState, FormBanner } from '../ui/states';
import { Time } from '../ui/Time';
import { useIssueToken, useRevokeToken, useTokens, type IssuedToken, type PersonalToken } from './queries';

export default function TokensPage() {
  const tokens = useTokens();
  const [issued, setIssued] = useState<IssuedToken | null>(null);
  return (
    <>
      <PageHeader
        title="Personal access tokens"
        subtitle="Yours, for the API and the CLI (Authorization: Bearer …): each acts as you, with at most your role, until it expires or you revoke it."
      />
      <IssueTokenForm onIssued={setIssued} />
      <PagedList query={tokens} what="tokens" empty={<EmptyState title="No tokens">Create one above for a script or the CLI.</EmptyState>}>
        {(items) => <TokensTable tokens={items} />}
      </PagedList>
      <RevealOnce
        secret={issued?.token ?? null}
        title={`Token “${issued?.name ?? ''}”`}
        what="token"
        label="Personal access token"
        copyLabel="Copy token"
        storeIn="Store it now, in your password manager or the script's secret store: pitcrew keeps only its hash and cannot show it again."
        onClose={() => setIssued(null)}
      />
    </>
  );
}

type TokenField = 'name' | 'expiresAt';

function IssueTokenForm({ onIssued }: { onIssued: (token: IssuedToken) => void }) {
  const issue = useIssueToken();
  const myRole = useMe().data?.role ?? 'viewer';
  const [name, setName] = useState('');
  const [role, setRole] = useState<Role | ''>('');
  const [expires, setExpires] = useState('');
  const [errors, setErrors] = useState<Partial<Record<TokenField, string>> & { banner?: string | null }>({});
  const submit = (event: FormEvent) => {
    event.preventDefault();
    if (!name.trim()) return setErrors({ name: 'name it after what will use it: “ci deploy”, “my laptop”' });
    setErrors({});
    const body = { name: name.trim(), ...(role ? { role } : {}), ...(expires ? { expiresAt: new Date(`${expires}T23:59:59`).toISOString() } : {}) };
    issue.mutate(body, {
      onSuccess: (token) => {
        setName('');
        setExpires('');
        onIssued(token);
      },
      onError: (problem) => {
        const placed = problemAtFields<TokenField>(problem, (path) => (path === '/body/name' ? 'name' : path === '/body/expiresAt' ? 'expiresAt' : undefined));
        setErrors({ ...placed.errors, banner: placed.banner });
      },
    });
  };
  return (
    <form className="inline-form panel" onSubmit={submit} noValidate>
      <Field label="New token name" error={errors.name}>
        <input value={name} onChange={(event) => setName(event.target.value)} placeholder="ci deploy" autoComplete="off" maxLength={100} />
      </Field>
      <Field label="Role" hint="At most yours. Left at “your role”, it follows yours when that changes.">
        <select value={role} onChange={(event) => setRole(event.target.value as Role | '')}>
          <option value="">your role ({myRole})</option>
          {ROLES.filter((one) => roleAtLeast(myRole, one)).map((one) => (
            <option key={one} value={one}>
              {one}
            </option>
          ))}
        </select>
      </Field>
      <Field label="Expires" error={errors.expiresAt} hint="Empty: until revoked.">
        <input type="date" value={expires} onChange={(event) => setExpires(event.target.value)} />
      </Field>
      <button type="submit" className="button button-primary" disabled={issue.isPending}>
        {issue.isPending ? 'Creating…' : 'Create token'}
      </button>
      <FormBanner banner={errors.banner} />
    </form>
  );
}

function TokensTable({ tokens }: { tokens: PersonalToken[] }) {
  return (
    <table className="table">
      <thead>
        <tr>
          <th>Name</th>
          <th>Role</th>
          <th>Created</th>
          <th>Expires</th>
          <th>Last used</th>
          <th>Status</th>
          <th aria-label="actions" />
        </tr>
      </thead>
      <tbody>
        {tokens.map((token) => (
          <tr key={token.id} data-token={token.name} className={token.revokedAt ? 'row-off' : undefined}>
            <td className="strong">{token.name}</td>
            <td>{token.role ?? <span className="muted">yours</span>}</td>
            <td>
              <Time iso={token.createdAt} />
            </td>
            <td>{token.expiresAt ? <Time iso={token.expiresAt} /> : <span className="muted">never</span>}</td>
            <td>
              <Time iso={token.lastUsedAt} />
            </td>
            <td>
              <RevokedOrActive revokedAt={token.revokedAt} />
            </td>
            <td>{token.revokedAt ? null : <RevokeToken token={token} />}</td>
          </tr>
        ))}
      </tbody>
    </table>
  );
}

function RevokeToken({ token }: { token: PersonalToken }) {
  const revoke = useRevokeToken();
  return (
    <ConfirmedAction
      label="Revoke"
      buttonClassName="link-button link-danger"
      title={`Revoke “${token.name}”?`}
      confirmLabel="Revoke"
      mutation={revoke}
      onConfirm={(close) => revoke.mutate(token.id, { onSuccess: close })}
    >
      <p>It stops working at once: whatever uses it is refused (401) from its next call.</p>
    </ConfirmedAction>
  );
}
