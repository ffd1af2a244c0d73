import { absoluteTime, relativeTime } from './format';
import { useNow } from './useNow';

/** A time shown relative ("3 min ago"), with the exact time on hover. */
export function Time({ iso }: { iso: string | null }) {
  const now = useNow();
  if (!iso) return <span className="muted">never</span>;
  return (
    <time dateTime={iso} title={absoluteTime(iso)}>
      {relativeTime(iso, now)}
    </time>
  );
}
