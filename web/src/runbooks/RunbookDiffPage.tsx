import { Link, useParams, useSearchParams } from 'react-router';
import type { DiffField, RunbookDiff, RunbookVersionView, RunbookView } from '../api/runbook-types';
import { INTERPRETER_LABELS } from '../rules/describe';
import { PageHeader } from '../ui/PageHeader';
import { EmptyState, Loadable } from '../ui/states';
import { diffCounts, diffLines } from './diff';
import { useRunbook, useRunbookDiff, useRunbookVersion } from './queries';
import { VersionSelect } from './RunbookVersions';

const FIELD_LABELS: Record<DiffField, string> = { name: 'name', description: 'notes', interpreter: 'interpreter', env: 'expected variables', script: 'script' };

/** /runbooks/:id/diff?from=&to=: what changed between any two versions, the versions picked in the URL. */
export default function RunbookDiffPage() {
  const { id = '' } = useParams();
  const runbook = useRunbook(id);
  return <Loadable query={runbook} what="the runbook">{(data) => <DiffView runbook={data} />}</Loadable>;
}

/** A version number from the URL, within 1..latest, else `fallback`. */
function versionParam(text: string | null, latest: number, fallback: number): number {
  const n = Number(text);
  return Number.isInteger(n) && n >= 1 && n <= latest ? n : fallback;
}

function DiffView({ runbook }: { runbook: RunbookView }) {
  const [params, setParams] = useSearchParams();
  const to = versionParam(params.get('to'), runbook.version, runbook.version);
  const from = versionParam(params.get('from'), runbook.version, Math.max(1, to - 1));
  const diff = useRunbookDiff(runbook.id, from, to);
  const pick = (name: 'from' | 'to', version: number) => setParams({ from: String(from), to: String(to), [name]: String(version) }, { replace: true });
  return (
    <>
      <PageHeader
        title={`${runbook.name}: changes`}
        subtitle={
          <>
            <Link to={`/runbooks/${runbook.id}`}>{runbook.name}</Link> · from version {from} to version {to}
          </>
        }
      />
      <form className="inline-form compare-form" aria-label="compare versions" onSubmit={(event) => event.preventDefault()}>
        <VersionSelect label="From version" value={from} latest={runbook.version} onChange={(version) => pick('from', version)} />
        <VersionSelect label="To version" value={to} latest={runbook.version} onChange={(version) => pick('to', version)} />
      </form>
      <Loadable query={diff} what="the changes">
        {(data) => <Changes runbookId={runbook.id} diff={data} />}
      </Loadable>
    </>
  );
}

function Changes({ runbookId, diff }: { runbookId: string; diff: RunbookDiff }) {
  if (diff.changed.length === 0) {
    return <EmptyState title={diff.from === diff.to ? 'The same version on both sides' : `Versions ${diff.from} and ${diff.to} are the same`}>Pick two different versions above.</EmptyState>;
  }
  const lines = diffLines(diff.diff);
  const { added, removed } = diffCounts(lines);
  return (
    <>
      <section className="panel">
        <h2>Changed</h2>
        <ul className="changed-fields" aria-label="changed fields">
          {diff.changed.map((field) => (
            <li key={field} data-field={field}>
              <FieldChange runbookId={runbookId} field={field} from={diff.from} to={diff.to} />
            </li>
          ))}
        </ul>
      </section>
      {lines.length > 0 ? (
        <section className="panel">
          <h2>
            Script <span className="diff-count diff-count-add">+{added}</span> <span className="diff-count diff-count-del">−{removed}</span>
          </h2>
          <pre className="diff" aria-label="script diff">
            {lines.map((line, i) => (
              <span key={i} className={`diff-line diff-${line.kind}`} data-kind={line.kind}>
                {line.text}
                {'\n'}
              </span>
            ))}
          </pre>
        </section>
      ) : null}
    </>
  );
}

/** A changed field, with its value on both sides when it is short (the script has its diff below; the notes link to each version). */
function FieldChange({ runbookId, field, from, to }: { runbookId: string; field: DiffField; from: number; to: number }) {
  const before = useRunbookVersion(runbookId, from);
  const after = useRunbookVersion(runbookId, to);
  const label = <strong>{FIELD_LABELS[field]}</strong>;
  if (field === 'script') return <>{label}: the lines below</>;
  if (field === 'description') {
    return (
      <>
        {label}: read them in <Link to={`/runbooks/${runbookId}/versions/${from}`}>version {from}</Link> and{' '}
        <Link to={`/runbooks/${runbookId}/versions/${to}`}>version {to}</Link>
      </>
    );
  }
  if (!before.data || !after.data) return label;
  return (
    <>
      {label}: <span className="diff-old">{valueOf(before.data, field)}</span> → <span className="diff-new">{valueOf(after.data, field)}</span>
    </>
  );
}

function valueOf(version: RunbookVersionView, field: 'name' | 'interpreter' | 'env'): string {
  if (field === 'interpreter') return INTERPRETER_LABELS[version.interpreter];
  if (field === 'env') return version.env.length === 0 ? 'none' : version.env.map((name) => `$${name}`).join(' ');
  return version.name;
}
