import { useMutation } from '@tanstack/react-query';
import { api } from '../api/client';
import { messageOf } from '../api/problem';
import type { Snapshot } from '../api/types';
import { copyText } from '../ui/clipboard';
import { absoluteTime } from '../ui/format';

interface SignedLink {
  signedUrl: string;
  expiresAt: string;
}

/**
 * Copy link: a signed link to the picture (POST /snapshots/{id}/link), for people who are not
 * signed in, as a chat notification carries it. Shown once made, with its expiry, should the
 * browser refuse to copy.
 */
export function CopySnapshotLink({ snapshot }: { snapshot: Snapshot }) {
  const link = useMutation({
    mutationFn: async () => {
      const made = await api<SignedLink>(`/snapshots/${snapshot.id}/link`, { method: 'POST', body: {} });
      const copied = await copyText(made.signedUrl).then(() => true, () => false);
      return { ...made, copied };
    },
  });
  return (
    <span className="snapshot-link">
      <button type="button" className="button button-small" disabled={link.isPending} onClick={() => link.mutate()}>
        Copy link
      </button>
      <span aria-live="polite">
        {link.data ? (
          <>
            {link.data.copied ? 'Copied ✓' : 'Copy it from here:'}{' '}
            <input readOnly value={link.data.signedUrl} aria-label={`signed link to ${snapshot.title}`} onFocus={(event) => event.target.select()} />{' '}
            <span className="muted">
              opens without signing in until <time dateTime={link.data.expiresAt}>{absoluteTime(link.data.expiresAt)}</time>
            </span>
          </>
        ) : link.isError ? (
          <span className="banner banner-error" role="alert">{messageOf(link.error)}</span>
        ) : null}
      </span>
    </span>
  );
}
