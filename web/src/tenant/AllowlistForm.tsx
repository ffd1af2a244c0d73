import { useState, type FormEvent } from 'react';
import { EditableBy } from '../auth/useRole';
import { problemAtFields } from '../api/problem';
import type { Tenant } from '../api/types';
import { ConfirmDialog } from '../ui/ConfirmDialog';
import { Field } from '../ui/Field';
import { ErrorBanner } from '../ui/states';
import { allowlistEntries, allowlistRowOf, newRow, sameList, type AllowlistRow } from './allowlist';
import { useUpdateTenant } from './queries';
import { SaveBar } from './SaveBar';

type AllowlistField = 'ipAllowlist' | 'agentAllowlist';

/** The words of each list: webhooks (monitoring tools) and agent enrolments sit in different networks. */
const WORDING: Record<AllowlistField, { heading: string; what: string; What: string; intro: string; empty: string; check: string }> = {
  ipAllowlist: {
    heading: 'IP allowlist',
    what: 'webhooks',
    What: 'Webhooks',
    intro: 'Webhook calls are accepted only from these IPv4 and IPv6 addresses or CIDR ranges',
    empty: 'With an empty list, any address that has one of your API keys can call your webhooks.',
    check: 'This browser cannot tell which address your monitoring tools call from: check that each of them is in the list.',
  },
  agentAllowlist: {
    heading: 'Agent allowlist',
    what: 'agent enrolments',
    What: 'Agent enrolments',
    intro: 'Agents may enrol (take a host name and its credential) only from these IPv4 and IPv6 addresses or CIDR ranges',
    empty: 'With an empty list, any address that has an API key with the enrol scope can enrol an agent.',
    check: 'This browser cannot tell which address your hosts enrol from: check that each network of hosts is in the list. Agents already enrolled keep their connection.',
  },
};

/** The addresses webhooks (or agent enrolments) are accepted from: one CIDR a row, saved only after saying what it does. */
export function AllowlistForm({ tenant, field = 'ipAllowlist' }: { tenant: Tenant; field?: AllowlistField }) {
  const words = WORDING[field];
  const update = useUpdateTenant();
  const current = tenant[field];
  const [rows, setRows] = useState(() => current.map((cidr) => newRow(cidr)));
  const [added, setAdded] = useState<number | null>(null);
  const [errors, setErrors] = useState<Partial<Record<number, string>>>({});
  const [banner, setBanner] = useState<string | null>(null);
  const [saved, setSaved] = useState<string | null>(null);
  const [confirming, setConfirming] = useState(false);
  const { cidrs, rowIds } = allowlistEntries(rows);
  const changed = !sameList(cidrs, current);

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
      { [field]: cidrs },
      {
        onSuccess: (tenant) => {
          const stored = tenant[field];
          setConfirming(false);
          setErrors({});
          setBanner(null);
          setRows(stored.map((cidr) => newRow(cidr)));
          setSaved(stored.length === 0 ? `Saved: ${words.what} are accepted from every address.` : `Saved: ${words.what} are accepted only from ${describeCount(stored.length)}.`);
        },
        onError: (error) => {
          setConfirming(false);
          const problem = problemAtFields(error, allowlistRowOf(rowIds, field));
          setErrors(problem.errors);
          setBanner(problem.banner);
        },
      },
    );

  return (
    <form className="panel" onSubmit={submit} noValidate aria-labelledby={`${field}-heading`}>
      <EditableBy do="configure">
        <h2 id={`${field}-heading`}>{words.heading}</h2>
        <p className="muted">
          {words.intro} (<code>203.0.113.0/24</code>, <code>2001:db8::/32</code>; a bare address is that one address). Calls from anywhere else get 403
          and nothing is recorded. {field === 'ipAllowlist' ? 'Agent enrolment has a list of its own; this UI is not affected.' : 'Webhooks have a list of their own; this UI is not affected.'}
        </p>
        <p className={`banner ${current.length === 0 ? 'banner-info' : 'banner-warn'}`} role="note">
          {current.length === 0
            ? `The list is empty: ${words.what} are accepted from every address. An empty list always means every address.`
            : `Now: ${words.what} are accepted only from ${describeCount(current.length)}. An empty list means every address.`}
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
          title={cidrs.length === 0 ? `Accept ${words.what} from every address?` : `Accept ${words.what} only from ${describeCount(cidrs.length)}?`}
          confirmLabel="Save allowlist"
          danger={cidrs.length > 0}
          busy={update.isPending}
          onCancel={() => setConfirming(false)}
          onConfirm={save}
        >
          {cidrs.length === 0 ? (
            <p>{words.empty}</p>
          ) : (
            <>
              <p>
                <strong>{words.What} from other addresses will be refused with 403</strong>, and nothing is recorded for them, from the next call on.
              </p>
              <ul className="allowlist-review mono">
                {cidrs.map((cidr, i) => (
                  <li key={i}>{cidr}</li>
                ))}
              </ul>
              <p>
                {words.check} Behind a proxy or load balancer, the address is the proxy's unless the service trusts it (<code>PITCREW_TRUST_PROXY</code>).
              </p>
            </>
          )}
        </ConfirmDialog>
      </EditableBy>
    </form>
  );
}

function describeCount(count: number): string {
  return count === 1 ? '1 address or range' : `${count} addresses or ranges`;
}
