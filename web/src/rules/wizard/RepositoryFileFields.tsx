import { messageOf } from '../../api/problem';
import { useRepositories, useRepositoryFiles } from '../../repositories/queries';
import { Field } from '../../ui/Field';
import { useDebounced } from '../../ui/useDebounced';
import { InterpreterField } from './InterpreterField';
import { ListPicker } from './ListPicker';
import type { StepProps } from './step';

/** A script file in one of the tenant's git repositories, fetched (read-only) before each run. */
export function RepositoryFileFields({ form, update, errors }: StepProps) {
  const repositories = useRepositories();
  const all = repositories.data?.items ?? [];
  const chosen = all.find((repository) => repository.id === form.repositoryId);
  return (
    <>
      <div className="field-row">
        <ListPicker label="Repository" what="repositories" list={repositories} items={all} value={form.repositoryId} choose="Choose a repository" unlisted="repository"
          none="No repository is connected yet. " make={{ to: '/repositories', label: 'Connect a repository' }} error={errors.repositoryId} onChange={(repositoryId) => update({ repositoryId })} />
        <Field label="Ref" error={errors.repositoryRef} hint={chosen ? `Branch, tag or commit; empty: the repository’s own (${chosen.ref}).` : 'Branch, tag or commit; empty: the repository’s own.'}>
          <input className="mono" value={form.repositoryRef} onChange={(event) => update({ repositoryRef: event.target.value })} placeholder={chosen?.ref ?? 'main'} autoComplete="off" spellCheck={false} />
        </Field>
        <InterpreterField value={form.interpreter} onChange={(interpreter) => update({ interpreter })} error={errors.interpreter} />
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
