import { useState, type FormEvent } from 'react';
import { useNavigate } from 'react-router';
import { problemAtFields } from '../api/problem';
import type { LibraryItem } from '../api/runbook-types';
import { INTERPRETER_LABELS } from '../rules/describe';
import { Field } from '../ui/Field';
import { FormBanner, Loadable } from '../ui/states';
import { Markdown } from './Markdown';
import { useInstallRunbook, useRunbookLibrary } from './queries';
import type { SavedState } from './RunbookPage';
import { EnvNames } from './RunbookFacts';

/** The starter runbooks shipped with pitcrew: read one's notes, install a copy of it as a runbook of the tenant's own. */
export function StarterLibrary() {
  const library = useRunbookLibrary();
  return (
    <section className="panel" aria-labelledby="starter-library">
      <h2 id="starter-library">Starter library</h2>
      <p className="muted">
        Runbooks shipped with pitcrew, each a reviewed POSIX sh script with notes on the variables it reads. Install one to get a copy of your own at
        version 1: yours to edit and version, never changed by an upgrade.
      </p>
      <Loadable query={library} what="the starter library">
        {(data) => (
          <ul className="library">
            {data.items.map((item) => (
              <LibraryEntry key={item.slug} item={item} />
            ))}
          </ul>
        )}
      </Loadable>
    </section>
  );
}

function LibraryEntry({ item }: { item: LibraryItem }) {
  const [name, setName] = useState(item.name);
  const [error, setError] = useState<string | undefined>();
  const [banner, setBanner] = useState<string | null>(null);
  const install = useInstallRunbook();
  const navigate = useNavigate();
  const submit = (event: FormEvent) => {
    event.preventDefault();
    setBanner(null);
    install.mutate(
      { slug: item.slug, name: name.trim() },
      {
        onSuccess: (saved) => {
          const state: SavedState = { saved: { version: saved.version, created: true, installedFrom: item.name } };
          void navigate(`/runbooks/${saved.id}`, { state });
        },
        onError: (problem) => {
          const placed = problemAtFields(problem, (path) => (path.startsWith('/body/name') ? 'name' : undefined));
          setError(placed.errors.name);
          setBanner(placed.banner);
        },
      },
    );
  };
  return (
    <li className="library-entry" data-library={item.slug}>
      <div className="library-head">
        <strong>{item.name}</strong> <span className="muted">{INTERPRETER_LABELS[item.interpreter]}</span> {item.env.length > 0 ? <EnvNames names={item.env} /> : null}
      </div>
      <details className="disclosure">
        <summary>Read the notes</summary>
        <Markdown source={item.description} />
      </details>
      <form className="inline-form" onSubmit={submit} aria-label={`install ${item.name}`} noValidate>
        <Field label="Install as" error={error}>
          <input value={name} onChange={(event) => { setName(event.target.value); setError(undefined); }} maxLength={200} autoComplete="off" />
        </Field>
        <button type="submit" className="button" disabled={install.isPending || !name.trim()}>
          {install.isPending ? 'Installing…' : 'Install'}
        </button>
      </form>
      <FormBanner banner={banner} />
    </li>
  );
}
