import { Fragment } from 'react';
import { ExpandableRow, useOpenRow } from '../ui/ExpandableRow';
import { Time } from '../ui/Time';
import { fieldChanges } from './changes';
import type { AuditActor, AuditEntry } from './queries';

export function AuditTable({ entries }: { entries: AuditEntry[] }) {
  const { open, toggle } = useOpenRow();
  return (
    <table className="table">
      <thead>
        <tr>
          <th>When</th>
          <th>Who</th>
          <th>Via</th>
          <th>From</th>
          <th>Action</th>
          <th>Target</th>
          <th aria-label="changes" />
        </tr>
      </thead>
      <tbody>
        {entries.map((entry) => (
          <ExpandableRow key={entry.id} open={open === entry.id} detail={<Changes entry={entry} />} columns={7} detailClassName="audit-changes">
            <tr data-action={entry.action}>
              <td>
                <Time iso={entry.at} />
              </td>
              <td className="strong">{actorName(entry.actor)}</td>
              <td>{entry.via}</td>
              <td className="mono">{entry.ip ?? '—'}</td>
              <td className="mono">{entry.action}</td>
              <td>
                {entry.targetType}
                {entry.targetId ? <span className="mono muted"> {entry.targetId}</span> : null}
              </td>
              <td>
                {entry.before !== undefined || entry.after !== undefined ? (
                  <button type="button" className="link-button" aria-expanded={open === entry.id} onClick={() => toggle(entry.id)}>
                    {open === entry.id ? 'Hide changes' : 'Changes'}
                  </button>
                ) : null}
              </td>
            </tr>
          </ExpandableRow>
        ))}
      </tbody>
    </table>
  );
}

function actorName(actor: AuditActor): string {
  if (actor.type === 'user') return actor.email ?? actor.id;
  if (actor.type === 'anonymous') return actor.email ? `someone claiming ${actor.email}` : 'someone not signed in';
  return `${actor.type === 'token' ? 'token' : 'API key'} “${actor.name}”`;
}

/** The fields the change touched, before → after (secrets arrive masked). */
function Changes({ entry }: { entry: AuditEntry }) {
  const changes = fieldChanges(entry.before, entry.after);
  if (changes.length === 0) return <p className="muted">No field changed.</p>;
  return (
    <dl className="audit-diff" aria-label="before and after">
      {changes.map((change) => (
        <Fragment key={change.path}>
          <dt className="mono">{change.path}</dt>
          <dd>
            {change.before !== undefined ? <span className="diff-old">{change.before}</span> : <span className="muted">(none)</span>} →{' '}
            {change.after !== undefined ? <span className="diff-new">{change.after}</span> : <span className="muted">(none)</span>}
          </dd>
        </Fragment>
      ))}
    </dl>
  );
}
