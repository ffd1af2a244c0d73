import { useState, type FormEvent } from 'react';
import { Link, useNavigate } from 'react-router';
import type { RunbookView } from '../api/runbook-types';
import { INTERPRETER_LABELS } from '../rules/describe';
import { Field } from '../ui/Field';
import { LoadMore } from '../ui/LoadMore';
import { Loadable } from '../ui/states';
import { Time } from '../ui/Time';
import { useRunbookVersions } from './queries';

/** The runbook's versions, newest first, each one link away from its content and from what it changed. */
export function RunbookVersions({ runbook }: { runbook: Pick<RunbookView, 'id' | 'version'> }) {
  const versions = useRunbookVersions(runbook.id);
  return (
    <section className="panel">
      <h2>Versions</h2>
      {runbook.version > 1 ? <CompareVersions runbook={runbook} /> : <p className="muted">One version so far: each save that changes something adds one.</p>}
      <Loadable query={versions} what="the versions">
        {(data) => (
          <>
            <table className="table versions-table">
              <thead>
                <tr>
                  <th className="num">Version</th>
                  <th>Name</th>
                  <th>Interpreter</th>
                  <th>SHA-256</th>
                  <th>Saved</th>
                  <th>Changes</th>
                </tr>
              </thead>
              <tbody>
                {data.pages.flatMap((page) => page.items).map((version) => (
                  <tr key={version.version} data-version={version.version}>
                    <td className="num">
                      <Link to={`/runbooks/${runbook.id}/versions/${version.version}`} className="strong-link">
                        {version.version}
                      </Link>
                      {version.version === runbook.version ? <span className="muted"> latest</span> : null}
                    </td>
                    <td>{version.name}</td>
                    <td>{INTERPRETER_LABELS[version.interpreter]}</td>
                    <td className="mono" title={version.sha256}>
                      {version.sha256.slice(0, 12)}
                    </td>
                    <td>
                      <Time iso={version.createdAt} />
                    </td>
                    <td>
                      {version.version > 1 ? (
                        <Link to={diffPath(runbook.id, version.version - 1, version.version)}>
                          from {version.version - 1}
                        </Link>
                      ) : (
                        <span className="muted">first</span>
                      )}
                    </td>
                  </tr>
                ))}
              </tbody>
            </table>
            <LoadMore query={versions} />
          </>
        )}
      </Loadable>
    </section>
  );
}

export function diffPath(id: string, from: number, to: number): string {
  return `/runbooks/${id}/diff?from=${from}&to=${to}`;
}

/** Any two versions, compared on the diff page. */
function CompareVersions({ runbook }: { runbook: Pick<RunbookView, 'id' | 'version'> }) {
  const navigate = useNavigate();
  const [from, setFrom] = useState(runbook.version - 1);
  const [to, setTo] = useState(runbook.version);
  const submit = (event: FormEvent) => {
    event.preventDefault();
    void navigate(diffPath(runbook.id, from, to));
  };
  return (
    <form className="inline-form compare-form" onSubmit={submit} aria-label="compare versions">
      <VersionSelect label="From version" value={from} latest={runbook.version} onChange={setFrom} />
      <VersionSelect label="To version" value={to} latest={runbook.version} onChange={setTo} />
      <button type="submit" className="button">
        Compare
      </button>
    </form>
  );
}

export function VersionSelect({ label, value, latest, onChange }: { label: string; value: number; latest: number; onChange: (version: number) => void }) {
  return (
    <Field label={label}>
      <select value={value} onChange={(event) => onChange(Number(event.target.value))}>
        {Array.from({ length: latest }, (_, i) => latest - i).map((version) => (
          <option key={version} value={version}>
            {version === latest ? `${version} (latest)` : String(version)}
          </option>
        ))}
      </select>
    </Field>
  );
}
