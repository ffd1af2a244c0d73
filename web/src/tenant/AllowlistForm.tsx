import { useState, type FormEvent } from 'react';
import { problemAtFields } from '../api/problem';
import type { Tenant } from '../api/types';
import { ConfirmDialog } from '../ui/ConfirmDialog';
import { Field } from '../ui/Field';
import { ErrorBanner } from '../ui/states';
import { allowlistEntries, allowlistRowOf, newRow, sameList, type AllowlistRow } from './allowlist';
import { useUpdateTenant } from './queries';
import { SaveBar } from './SaveBar';

/** The addresses webhooks are accepted from: one CIDR a row, saved only after saying what it does. */
export function AllowlistForm({ tenant }: { tenant: Tenant }) {
  const update = useUpdateTenant();
  const [rows, setRows] = useState(() => tenant.ipAllowlist.map((cidr) => newRow(cidr)));
  const [added, setAdded] = useState<number | null>(null);
  const [errors, setErrors] = useState<Partial<Record<number, string>>>({});
  const [banner, setBanner] = useState<string | null>(null);
  const [saved, setSaved] = useState<string | null>(null);
  const [confirming, setConfirming] = useState(false);
  const { cidrs, rowIds } = allowlistEntries(rows);
  const changed = !sameList(cidrs, tenant.ipAllowlist);

  const edit = (next: AllowlistRow[]) => {
    setRows(next);
    setSaved(null);
  };
  const setValue = (id: number, value: string) => {
    edit(rows.map((row) => (row.id === id ? { ...row, value } : row)));
    setErrors((current) => ({ ...current, [id]: undefined }));
  };
  const add = () => {
    const row = newRow();
    setAdded(row.id);
    edit([...rows, row]);
  };

  const submit = (event: FormEvent) => {
    event.preventDefault();
    update.reset();
    setConfirming(true);
  };
  const save = () =>
    update.mutate(
      { ipAllowlist: cidrs },
      {
        onSuccess: (tenant) => {
          setConfirming(false);
          setErrors({});
          setBanner(null);
          setRows(tenant.ipAllowlist.map((cidr) => newRow(cidr)));
          setSaved(tenant.ipAllowlist.length === 0 ? 'Saved: webhooks are accepted from every address.' : `Saved: webhooks are accepted only from ${describeCount(tenant.ipAllowlist.length)}.`);
        },
        onError: (error) => {
          setConfirming(false);
          const problem = problemAtFields(error, allowlistRowOf(rowIds));
          setErrors(problem.errors);
          setBanner(problem.banner);
        },
      },
    );

  return (
    <form className="panel" onSubmit={submit} noValidate aria-labelledby="allowlist-heading">
      <h2 id="allowlist-heading">IP allowlist</h2>
      <p className="muted">
        Webhook calls are accepted only from these IPv4 and IPv6 addresses or CIDR ranges (<code>203.0.113.0/24</code>, <code>2001:db8::/32</code>; a
        bare address is that one address). Calls from anywhere else get 403 and nothing is recorded. Agents and this UI are not affected.
      </p>
      <p className={`banner ${tenant.ipAllowlist.length === 0 ? 'banner-info' : 'banner-warn'}`} role="note">
        {tenant.ipAllowlist.length === 0
          ? 'The list is empty: webhooks are accepted from every address. An empty list always means every address.'
          : `Now: webhooks are accepted only from ${describeCount(tenant.ipAllowlist.length)}. An empty list means every address.`}
      </p>
      {banner ? <ErrorBanner error={banner} /> : null}
      <ol className="allowlist">
        {rows.map((row, i) => (
          <li key={row.id}>
            <Field label={`Allowed address ${i + 1}`} error={errors[row.id]}>
              <input
                className="mono"
                value={row.value}
                placeholder="203.0.113.0/24"
                autoComplete="off"
                spellCheck={false}
                maxLength={64}
                autoFocus={row.id === added}
                onChange={(event) => setValue(row.id, event.target.value)}
              />
            </Field>
            <button type="button" className="button button-quiet" aria-label={`Remove address ${i + 1}`} onClick={() => edit(rows.filter((r) => r.id !== row.id))}>
              Remove
            </button>
          </li>
        ))}
      </ol>
      <SaveBar label="Save allowlist" busy={update.isPending} disabled={!changed} saved={saved}>
        <button type="button" className="button" onClick={add}>
          Add an address
        </button>
      </SaveBar>
      <ConfirmDialog
        open={confirming}
        title={cidrs.length === 0 ? 'Accept webhooks from every address?' : `Accept webhooks only from ${describeCount(cidrs.length)}?`}
        confirmLabel="Save allowlist"
        danger={cidrs.length > 0}
        busy={update.isPending}
        onCancel={() => setConfirming(false)}
        onConfirm={save}
      >
        {cidrs.length === 0 ? (
          <p>With an empty list, any address that has one of your API keys can call your webhooks.</p>
        ) : (
          <>
            <p>
              <strong>Webhooks from other addresses will be refused with 403</strong>, and nothing is recorded for them, from the next call on.
            </p>
            <ul className="allowlist-review mono">
              {cidrs.map((cidr, i) => (
                <li key={i}>{cidr}</li>
              ))}
            </ul>
            <p>
              This browser cannot tell which address your monitoring tools call from: check that each of them is in the list. Behind a proxy or load
              balancer, the address is the proxy's unless the service trusts it (<code>PITCREW_TRUST_PROXY</code>).
            </p>
          </>
        )}
      </ConfirmDialog>
    </form>
  );
}

function describeCount(count: number): string {
  return count === 1 ? '1 address or range' : `${count} addresses or ranges`;
}
