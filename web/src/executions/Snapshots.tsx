import { useQuery } from '@tanstack/react-query';
import { Link } from 'react-router';
import { apiFetch } from '../api/client';
import { messageOf } from '../api/problem';
import type { Page, Snapshot } from '../api/types';
import { api } from '../api/client';
import { bytes } from '../ui/format';
import { CopySnapshotLink } from './CopySnapshotLink';

/** The graphs an execution captured (docs/graph-snapshots.md): each drawn, with its query and a full-size link. */
export function Snapshots({ snapshots }: { snapshots: Snapshot[] }) {
  if (snapshots.length === 0) return null;
  return (
    <section className="panel" aria-label="Graph snapshots">
      <h2>Graph snapshots</h2>
      <ul className="snapshot-list">
        {snapshots.map((snapshot) => (
          <li key={snapshot.id}>
            <SnapshotFigure snapshot={snapshot} />
          </li>
        ))}
      </ul>
    </section>
  );
}

export function SnapshotFigure({ snapshot, linkExecution = false }: { snapshot: Snapshot; linkExecution?: boolean }) {
  const image = useSnapshotImage(snapshot);
  return (
    <figure className="snapshot">
      {image.data ? (
        <a href={image.data} target="_blank" rel="noreferrer" title="Open full size">
          <img src={image.data} alt={`graph: ${snapshot.title}`} width={snapshot.width} height={snapshot.height} />
        </a>
      ) : image.error ? (
        <p className="banner banner-warn">The image did not load: {messageOf(image.error)}</p>
      ) : (
        <p className="muted">loading the image…</p>
      )}
      <figcaption>
        <strong>{snapshot.title}</strong>
        <code className="mono">{snapshot.query}</code>
        <span className="muted">
          {snapshot.width}×{snapshot.height} · {bytes(snapshot.bytes)}
          {linkExecution ? (
            <>
              {' · '}
              <Link to={`/executions/${snapshot.executionId}`}>execution {snapshot.executionId.slice(-8)}</Link>
            </>
          ) : null}
        </span>
        <CopySnapshotLink snapshot={snapshot} />
      </figcaption>
    </figure>
  );
}

/** The image as a blob URL: an <img> cannot carry the Authorization header a token session needs. */
function useSnapshotImage(snapshot: Snapshot) {
  return useQuery({
    queryKey: ['snapshots', 'image', snapshot.id],
    queryFn: async ({ signal }) => URL.createObjectURL(await (await apiFetch(`/snapshots/${snapshot.id}`, { signal })).blob()),
    staleTime: Number.POSITIVE_INFINITY,
    gcTime: 5 * 60_000,
  });
}

/** A small picture of an event's capture, where a list of executions has no room for the full one. */
export function SnapshotThumb({ snapshot }: { snapshot: Snapshot }) {
  const image = useSnapshotImage(snapshot);
  return (
    <Link to={`/executions/${snapshot.executionId}`} className="snapshot-thumb" title={`${snapshot.title}: open the execution`}>
      {image.data ? <img src={image.data} alt={`graph: ${snapshot.title}`} /> : <span className="muted">graph…</span>}
    </Link>
  );
}

/** The latest snapshots of a rule's executions, newest first; they refresh as new alerts are captured. */
export function useRuleSnapshots(ruleId: string, limit = 20) {
  return useQuery({
    queryKey: ['snapshots', 'rule', ruleId, limit],
    queryFn: ({ signal }) => api<Pick<Page<Snapshot>, 'items'>>('/snapshots', { query: { ruleId, limit }, signal }),
    refetchInterval: 5000,
  });
}
