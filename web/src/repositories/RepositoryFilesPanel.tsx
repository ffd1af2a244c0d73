import { useState } from 'react';
import type { Repository } from '../api/repository-types';
import { messageOf } from '../api/problem';
import { Field } from '../ui/Field';
import { useDebounced } from '../ui/useDebounced';
import { useRepositoryFiles } from './queries';

/** The regular files at a ref's commit: the paths a rule can run. */
export function RepositoryFilesPanel({ repository }: { repository: Repository }) {
  const [ref, setRef] = useState(repository.ref);
  const settled = useDebounced(ref.trim());
  const files = useRepositoryFiles(repository.id, settled === repository.ref ? '' : settled);
  const listed = files.data;
  return (
    <section className="panel">
      <h2>Files</h2>
      <Field label="At ref" hint="A branch or tag; the files a rule can name as its runbook's path.">
        <input className="mono" value={ref} onChange={(event) => setRef(event.target.value)} maxLength={255} autoComplete="off" spellCheck={false} />
      </Field>
      {files.isPending ? <p className="muted">Listing the files…</p> : null}
      {files.isError ? (
        <p className="banner banner-error" role="alert">
          {messageOf(files.error)}
        </p>
      ) : null}
      {listed && !listed.ok ? (
        <p className="banner banner-error" role="alert">
          {listed.message}
        </p>
      ) : null}
      {listed?.ok ? (
        <>
          <p className="muted" data-files-summary>
            {listed.message}
          </p>
          <ul className="file-list" aria-label="files">
            {listed.files.map((path) => (
              <li key={path} className="mono">
                {path}
              </li>
            ))}
          </ul>
        </>
      ) : null}
    </section>
  );
}
