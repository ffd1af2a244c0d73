import { Link } from 'react-router';
import type { Interpreter } from '../../api/types';
import { messageOf } from '../../api/problem';
import { useRepositories, useRepositoryFiles } from '../../repositories/queries';
import { Field } from '../../ui/Field';
import { useDebounced } from '../../ui/useDebounced';
import { INTERPRETER_LABELS } from '../describe';
import type { StepProps } from './step';

/** A script file in one of the tenant's git repositories, fetched (read-only) before each run. */
export function RepositoryFileFields({ form, update, errors }: StepProps) {
  const repositories = useRepositories();
  const all = repositories.data?.items ?? [];
  const chosen = all.find((repository) => repository.id === form.repositoryId);
  const hint = (
    <>
      {repositories.isSuccess && all.length === 0 ? 'No repository is connected yet. ' : null}
      <Link to="/repositories" target="_blank" rel="noopener">
        Connect a repository
      </Link>{' '}
      (opens in a new tab; this list refreshes when you come back).
    </>
  );
  return (
    <>
      <div className="field-row">
        <Field label="Repository" error={errors.repositoryId ?? (repositories.isError ? 'could not list the repositories: reload to try again' : undefined)} hint={hint}>
          <select value={chosen ? chosen.id : form.repositoryId} onChange={(event) => update({ repositoryId: event.target.value })}>
            <option value="">{repositories.isPending ? 'Loading…' : 'Choose a repository'}</option>
            {form.repositoryId && !chosen && repositories.isSuccess ? <option value={form.repositoryId}>repository {form.repositoryId} (no longer listed)</option> : null}
            {all.map((repository) => (
              <option key={repository.id} value={repository.id}>
                {repository.name}
              </option>
            ))}
          </select>
        </Field>
        <Field label="Ref" error={errors.repositoryRef} hint={chosen ? `Branch, tag or commit; empty: the repository’s own (${chosen.ref}).` : 'Branch, tag or commit; empty: the repository’s own.'}>
          <input className="mono" value={form.repositoryRef} onChange={(event) => update({ repositoryRef: event.target.value })} placeholder={chosen?.ref ?? 'main'} autoComplete="off" spellCheck={false} />
        </Field>
        <Field label="Interpreter" error={errors.interpreter}>
          <select value={form.interpreter} onChange={(event) => update({ interpreter: event.target.value as Interpreter })}>
            {Object.entries(INTERPRETER_LABELS).map(([value, label]) => (
              <option key={value} value={value}>
                {label}
              </option>
            ))}
          </select>
        </Field>
      </div>
      <PathPicker form={form} update={update} errors={errors} />
    </>
  );
}

/** The script's path: typed, or picked from the repository's files at the ref when the service can list them. */
function PathPicker({ form, update, errors }: StepProps) {
  const ref = useDebounced(form.repositoryRef.trim());
  const files = useRepositoryFiles(form.repositoryId, ref);
  const typed = form.repositoryPath.trim();
  const listed = files.data?.ok ? files.data : undefined;
  const matching = (listed?.files ?? []).filter((path) => path.toLowerCase().includes(typed.toLowerCase())).slice(0, 10);
  const hint = files.isError
    ? `The files could not be listed (${messageOf(files.error)}): type the path.`
    : files.data && !files.data.ok
      ? `The files could not be listed (${files.data.message}): type the path.`
      : listed
        ? `${listed.files.length}${listed.truncated ? '+' : ''} files at ${listed.ref}${listed.commit ? ` (${listed.commit.slice(0, 7)})` : ''}: type to filter, then pick one.`
        : 'The path of the script from the repository’s root.';
  return (
    <div className="picker">
      <Field label="Path in the repository" error={errors.repositoryPath} hint={hint}>
        <input className="mono" value={form.repositoryPath} onChange={(event) => update({ repositoryPath: event.target.value })} placeholder="runbooks/restart.sh" autoComplete="off" spellCheck={false} />
      </Field>
      {matching.length > 0 && !(matching.length === 1 && matching[0] === typed) ? (
        <ul className="picker-list" role="listbox" aria-label="files">
          {matching.map((path) => (
            <li key={path}>
              <button type="button" role="option" aria-selected={path === typed} className="picker-option mono" onClick={() => update({ repositoryPath: path })}>
                {path}
              </button>
            </li>
          ))}
        </ul>
      ) : null}
    </div>
  );
}
