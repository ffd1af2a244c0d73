import { Link, useLocation, useParams } from 'react-router';
import { Can } from '../auth/useRole';
import type { RunbookView } from '../api/runbook-types';
import { PageHeader } from '../ui/PageHeader';
import { Loadable } from '../ui/states';
import { DeleteRunbook } from './DeleteRunbook';
import { useRunbook } from './queries';
import { RunbookContent } from './RunbookContent';
import { RunbookVersions } from './RunbookVersions';
import { UsedBy } from './UsedBy';

/** What the form's save said, carried to the page it opens. */
export interface SavedState {
  /** installedFrom: the starter runbook it is a copy of. */
  saved: { version: number; created: boolean; installedFrom?: string };
}

/** A runbook at its latest version, and its history. */
export default function RunbookPage() {
  const { id = '' } = useParams();
  const runbook = useRunbook(id);
  return <Loadable query={runbook} what="the runbook">{(data) => <RunbookDetail key={data.id} runbook={data} />}</Loadable>;
}

function RunbookDetail({ runbook }: { runbook: RunbookView }) {
  const saved = (useLocation().state as SavedState | null)?.saved;
  return (
    <>
      <PageHeader
        title={runbook.name}
        subtitle={
          <>
            <Link to="/runbooks">Runbooks</Link> · version {runbook.version}, the latest
          </>
        }
        actions={
          <>
            <Can do="configure">
              <Link to={`/runbooks/${runbook.id}/edit`} className="button">
                Edit
              </Link>
            </Can>
            <Can do="configure"><DeleteRunbook runbook={runbook} /></Can>
          </>
        }
      />
      {saved ? <SaveOutcome saved={saved} /> : null}
      <RunbookContent content={{ ...runbook, savedAt: runbook.updatedAt }} more={[['Used by', <UsedBy runbookId={runbook.id} />]]} />
      <RunbookVersions runbook={runbook} />
    </>
  );
}

function SaveOutcome({ saved }: SavedState) {
  return (
    <p className="banner banner-info" role="status" data-save-outcome>
      {outcomeText(saved)}
    </p>
  );
}

function outcomeText(saved: SavedState['saved']): string {
  if (saved.installedFrom) return `Installed from the starter library as version ${saved.version}: this copy is yours to edit.`;
  if (saved.created) return `Version ${saved.version} saved.`;
  return `Nothing changed: what you saved is version ${saved.version} as it stands, so no version was made.`;
}
