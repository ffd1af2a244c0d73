import { useState } from 'react';
import { Can } from '../auth/useRole';
import { messageOf } from '../api/problem';
import type { Host } from '../api/types';
import { TagInput } from '../ui/TagInput';
import { useHostTags, useSetHostTags } from './queries';

/** Tags of a host: the agent's own (--tags, fixed here) and those managed in pitcrew (editable). */
export function HostTags({ host }: { host: Host }) {
  const [editing, setEditing] = useState(false);
  if (editing) return <Editor host={host} onDone={() => setEditing(false)} />;
  return (
    <div className="tags-cell">
      {host.agentTags.map((tag) => (
        <span key={tag} className="chip chip-fixed" title="from the agent's --tags">
          {tag}
        </span>
      ))}
      {host.managedTags
        .filter((tag) => !host.agentTags.includes(tag))
        .map((tag) => (
          <span key={tag} className="chip" title="managed in pitcrew">
            {tag}
          </span>
        ))}
      <Can do="configure">
        <button type="button" className="link-button" onClick={() => setEditing(true)} aria-label={`edit tags of ${host.hostname}`}>
          Edit
        </button>
      </Can>
    </div>
  );
}

function Editor({ host, onDone }: { host: Host; onDone: () => void }) {
  const [tags, setTags] = useState(host.managedTags);
  const save = useSetHostTags();
  const known = useHostTags();
  return (
    <div className="tags-editor">
      <TagInput tags={tags} onChange={setTags} suggestions={known.data?.items} placeholder="add a tag" aria-describedby={`tags-note-${host.id}`} />
      <p className="field-hint" id={`tags-note-${host.id}`}>
        {host.agentTags.length > 0 ? `The agent's own tags (${host.agentTags.join(', ')}) stay; change them with its --tags. ` : ''}
        Rules targeting tags use the new set from the next event on.
      </p>
      {save.error ? <p className="field-error">{messageOf(save.error)}</p> : null}
      <div className="inline-actions">
        <button type="button" className="button button-primary button-small" disabled={save.isPending} onClick={() => save.mutate({ id: host.id, tags }, { onSuccess: onDone })}>
          {save.isPending ? 'Saving…' : 'Save tags'}
        </button>
        <button type="button" className="button button-small" onClick={onDone}>
          Cancel
        </button>
      </div>
    </div>
  );
}
