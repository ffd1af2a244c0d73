import { useQuery } from '@tanstack/react-query';
import { apiFetch } from '../api/client';
import { messageOf } from '../api/problem';
import type { Snapshot } from '../api/types';
import { bytes } from '../ui/format';

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

function SnapshotFigure({ snapshot }: { snapshot: Snapshot }) {
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
        </span>
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
