import { Link } from 'react-router';
import { Sha256 } from '../../runbooks/RunbookFacts';
import { useRunbookChoices, useRunbookVersion } from '../../runbooks/queries';
import { VersionSelect } from '../../runbooks/RunbookVersions';
import { CodeBlock } from '../../ui/CodeBlock';
import { RadioChoices } from '../../ui/RadioChoices';
import { ListPicker } from './ListPicker';
import type { StepProps } from './step';

/** A stored runbook, picked by name: the rule follows its latest version, or runs one version only. */
export function StoredRunbookFields({ form, update, errors }: StepProps) {
  const runbooks = useRunbookChoices();
  const all = runbooks.data ?? [];
  const chosen = all.find((runbook) => runbook.id === form.runbookId);
  const pinned = form.runbookPin === 'pinned';
  const version = pinned ? Number(form.runbookVersion) : chosen?.version;
  return (
    <>
      <ListPicker label="Runbook" what="runbooks" list={runbooks} items={all} value={form.runbookId} choose="Choose a runbook" unlisted="runbook" error={errors.runbookId}
        none="No runbook is stored yet: save what you write as a new runbook instead, or " make={{ to: '/runbooks/new', label: 'write a runbook' }}
        onChange={(runbookId) => update({ runbookId, runbookVersion: String(all.find((runbook) => runbook.id === runbookId)?.version ?? '') })} />
      {chosen ? (
        <>
          <VersionChoice form={form} update={update} errors={errors} latest={chosen.version} />
          {version ? <RunbookPreview id={chosen.id} version={version} /> : null}
        </>
      ) : null}
    </>
  );
}

/** Follow the latest version (a save of the runbook runs from the next run on), or pin one. */
export function VersionChoice({ form, update, errors, latest }: StepProps & { latest: number | undefined }) {
  const now = latest === undefined ? '' : ` (now version ${latest})`;
  return (
    <RadioChoices
      legend="Which version runs"
      layout="choices-inline"
      value={form.runbookPin}
      onChange={(runbookPin) => update({ runbookPin, ...(runbookPin === 'pinned' && !form.runbookVersion && latest ? { runbookVersion: String(latest) } : {}) })}
      choices={[
        { value: 'latest', title: 'Follow the latest', text: `Each run takes the runbook’s latest version${now}: a saved change runs from the next run on.` },
        { value: 'pinned', title: 'Pin a version', text: 'Runs that version until you change the rule, whatever is saved after it.' },
      ]}
      error={errors.runbookVersion}
    >
      {form.runbookPin === 'pinned' && latest !== undefined ? (
        <VersionSelect label="Version" value={Number(form.runbookVersion) || latest} latest={latest} onChange={(version) => update({ runbookVersion: String(version) })} />
      ) : null}
    </RadioChoices>
  );
}

/** What the rule would run: the script of that version, its SHA-256, and a link to read the rest. */
function RunbookPreview({ id, version }: { id: string; version: number }) {
  const shown = useRunbookVersion(id, version);
  if (!shown.data) return null;
  return (
    <div className="runbook-preview" data-runbook-preview>
      <h3>
        Version {version} runs{' '}
        <Link to={`/runbooks/${id}/versions/${version}`} target="_blank" rel="noopener" className="h2-link">
          read its notes
        </Link>
      </h3>
      <CodeBlock code={shown.data.script} copyLabel="Copy script" label="script of the runbook" />
      <p className="muted">
        {shown.data.interpreter} · SHA-256 <Sha256 value={shown.data.sha256} />
      </p>
    </div>
  );
}
