import { useHostCount, useHostTags, useHosts } from '../../hosts/queries';
import { Field } from '../../ui/Field';
import { TagInput } from '../../ui/TagInput';

/** Pick tags, seeing at once how many hosts carry all of them: those are the targets. */
export function TagPicker({ tags, onChange, error, hint = 'Every host carrying all of these tags runs the action, once each.' }: { tags: string[]; onChange: (tags: string[]) => void; error?: string; hint?: string }) {
  const known = useHostTags();
  const count = useHostCount(tags);
  const sample = useHosts({ tags, limit: 6, enabled: tags.length > 0 });
  return (
    <div className="picker">
      <Field label="Tags" error={error} hint={hint}>
        <TagInput tags={tags} onChange={onChange} suggestions={known.data?.items ?? []} placeholder="web, eu, …" />
      </Field>
      <p className="match-count" role="status" aria-live="polite">
        {tags.length === 0 ? (
          'Add a tag to see the hosts it matches.'
        ) : count.data ? (
          <>
            <strong>
              {count.data.count} {count.data.count === 1 ? 'host matches' : 'hosts match'}
            </strong>{' '}
            ({count.data.online} online){count.data.count > 0 ? ': ' : '. Events record no_target until a host with these tags connects.'}
            <span className="mono">
              {sample.data?.items.map((host) => host.hostname).join(', ')}
              {count.data.count > (sample.data?.items.length ?? 0) ? ', …' : ''}
            </span>
          </>
        ) : count.isError ? (
          'Could not count the matching hosts.'
        ) : (
          'Counting matching hosts…'
        )}
      </p>
    </div>
  );
}
