import type { DeliveryAttempt } from '../api/channel-types';
import { AttemptBadge } from '../ui/Badge';
import { duration } from '../ui/format';
import { LoadMore } from '../ui/LoadMore';
import { EmptyState, Loadable } from '../ui/states';
import { Time } from '../ui/Time';
import { useChannelAttempts } from './queries';

/** Every delivery attempt of the channel, newest first: what was sent and what the receiver said. */
export function ChannelAttempts({ channelId }: { channelId: string }) {
  const attempts = useChannelAttempts(channelId);
  return (
    <section className="panel">
      <h2>Attempts</h2>
      <Loadable
        query={attempts}
        what="attempts"
        isEmpty={(data) => data.pages[0]!.items.length === 0}
        empty={<EmptyState title="Nothing sent yet">Send a test message above, or wait for a result its mode lets through.</EmptyState>}
      >
        {(data) => (
          <>
            <AttemptsTable attempts={data.pages.flatMap((page) => page.items)} />
            <LoadMore query={attempts} />
          </>
        )}
      </Loadable>
    </section>
  );
}

function AttemptsTable({ attempts }: { attempts: DeliveryAttempt[] }) {
  return (
    <table className="table">
      <thead>
        <tr>
          <th>When</th>
          <th>Result</th>
          <th>Message</th>
          <th className="num">Try</th>
          <th>Answer</th>
          <th className="num">Took</th>
          <th>Error</th>
        </tr>
      </thead>
      <tbody>
        {attempts.map((attempt) => (
          <tr key={attempt.id} data-attempt={attempt.ok ? 'delivered' : 'failed'}>
            <td>
              <Time iso={attempt.at} />
            </td>
            <td>
              <AttemptBadge ok={attempt.ok} />
            </td>
            <td>
              <span className="muted">{attempt.kind}</span> {attempt.title}
            </td>
            <td className="num">{attempt.attempt}</td>
            <td className="mono">{attempt.status ?? <span className="muted">–</span>}</td>
            <td className="num">{duration(attempt.durationMs)}</td>
            <td className="cell-reason">{attempt.error ?? ''}</td>
          </tr>
        ))}
      </tbody>
    </table>
  );
}
