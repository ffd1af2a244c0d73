import { useState } from 'react';
import { apiFetch } from '../api/client';
import { messageOf } from '../api/problem';
import { currentToken } from '../auth/session';
import { PagedList } from '../ui/PagedList';
import { PageHeader } from '../ui/PageHeader';
import { SearchBox, useUrlSearch } from '../ui/SearchBox';
import { EmptyState, NoMatch } from '../ui/states';
import { useUrlFilters } from '../ui/useUrlFilters';
import { AuditTable } from './AuditTable';
import { exportUrl, useAuditLog, type AuditFilters } from './queries';

/** Who changed what, when and from where (admins and owners). */
export default function AuditPage() {
  const { params, set, clear } = useUrlFilters();
  const actor = useUrlSearch('actor');
  const target = useUrlSearch('target');
  const action = useUrlSearch('action');
  const from = params.get('from') ?? '';
  const to = params.get('to') ?? '';
  const filters: AuditFilters = {
    actor: actor.settled || undefined,
    target: target.settled || undefined,
    action: action.settled || undefined,
    from: isoOf(from),
    to: isoOf(to),
  };
  const log = useAuditLog(filters);
  const filtered = Object.values(filters).some(Boolean);
  const reset = () => {
    actor.reset();
    target.reset();
    action.reset();
    clear();
  };
  return (
    <>
      <PageHeader
        title="Audit log"
        subtitle="Every change made in this tenant: who (a person, or which token), how they signed in, from which address, and what the thing was before and after. Nobody can edit or delete an entry."
        actions={<ExportLink filters={filters} />}
      />
      <div className="toolbar" role="search">
        <SearchBox label="Actor" placeholder="E-mail or id" search={actor} />
        <SearchBox label="Target" placeholder="rule, or rule:<id>" search={target} />
        <SearchBox label="Action" placeholder="rule.update, or rule." search={action} />
        <label className="toolbar-field">
          From <input type="datetime-local" value={from} onChange={(event) => set('from', event.target.value)} />
        </label>
        <label className="toolbar-field">
          To <input type="datetime-local" value={to} onChange={(event) => set('to', event.target.value)} />
        </label>
      </div>
      <PagedList
        query={log}
        what="audit entries"
        empty={filtered ? <NoMatch what="entry" onClear={reset} /> : <EmptyState title="Nothing changed yet">Each change to a rule, key, channel, setting or user is recorded here.</EmptyState>}
      >
        {(entries) => <AuditTable entries={entries} />}
      </PagedList>
    </>
  );
}

/** A datetime-local value (this browser's clock) as the API's ISO time. */
function isoOf(local: string): string | undefined {
  if (!local) return undefined;
  const time = new Date(local);
  return Number.isNaN(time.getTime()) ? undefined : time.toISOString();
}

/** A plain link with a session cookie; a tab signed in with a token fetches (a link cannot carry the header) and saves. */
function ExportLink({ filters }: { filters: AuditFilters }) {
  const [error, setError] = useState<string | null>(null);
  const href = exportUrl(filters);
  const download = async () => {
    try {
      const response = await apiFetch('/audit/export', { query: { ...filters } });
      const url = URL.createObjectURL(await response.blob());
      const link = document.createElement('a');
      link.href = url;
      link.download = 'pitcrew-audit.jsonl';
      link.click();
      setTimeout(() => URL.revokeObjectURL(url), 10_000);
    } catch (problem) {
      setError(messageOf(problem));
    }
  };
  return (
    <>
      <a
        className="button"
        href={href}
        download="pitcrew-audit.jsonl"
        onClick={(event) => {
          if (currentToken() === null) return;
          event.preventDefault();
          void download();
        }}
      >
        Export JSON lines
      </a>
      {error ? <span className="field-error">{error}</span> : null}
    </>
  );
}
