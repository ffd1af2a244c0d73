import { messageOf } from '../api/problem';
import type { Channel } from '../api/channel-types';
import { duration } from '../ui/format';
import { useTestChannel } from './queries';

/** Sends a test message now, whatever the mode, and says what the receiver answered. */
export function TestMessage({ channel }: { channel: Channel }) {
  const test = useTestChannel();
  const at = new Date(test.submittedAt).toLocaleTimeString();
  return (
    <section className="panel">
      <h2>Test message</h2>
      <p className="muted">
        Sends a short test message to this channel now{channel.mode === 'disabled' ? ', even though it is disabled' : ''}, and records it with
        the attempts below.
      </p>
      <button type="button" className="button" onClick={() => test.mutate(channel.id)} disabled={test.isPending}>
        {test.isPending ? 'Sending…' : 'Send test message'}
      </button>
      <div aria-live="polite" className="test-outcome">
        {test.isSuccess ? (
          <p className="banner banner-info" role="status">
            <span>
              <strong>Delivered</strong> at {at}
              {test.data.status ? ` (${test.data.status})` : ''} in {duration(test.data.durationMs)}.
            </span>
          </p>
        ) : null}
        {test.isError ? (
          <p className="banner banner-error" role="alert">
            <span>
              <strong>Not delivered</strong> at {at}: {messageOf(test.error)}
            </span>
          </p>
        ) : null}
      </div>
    </section>
  );
}
