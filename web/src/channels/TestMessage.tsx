import { messageOf } from '../api/problem';
import type { Channel } from '../api/channel-types';
import { duration } from '../ui/format';
import { TestNow, type TestOutcome } from '../ui/TestNow';
import { useTestChannel } from './queries';

/** Sends a test message now, whatever the mode, and says what the receiver answered. */
export function TestMessage({ channel }: { channel: Channel }) {
  const test = useTestChannel();
  return (
    <TestNow title="Test message" button="Send test message" busy="Sending…" test={test} onTest={() => test.mutate(channel.id)} outcome={(at) => outcomeOf(test, at)}>
      Sends a short test message to this channel now{channel.mode === 'disabled' ? ', even though it is disabled' : ''}, and records it with the
      attempts below.
    </TestNow>
  );
}

function outcomeOf(test: ReturnType<typeof useTestChannel>, at: string): TestOutcome | null {
  if (test.isSuccess) {
    return { failed: false, says: <><strong>Delivered</strong> at {at}{test.data.status ? ` (${test.data.status})` : ''} in {duration(test.data.durationMs)}.</> };
  }
  if (test.isError) return { failed: true, says: <><strong>Not delivered</strong> at {at}: {messageOf(test.error)}</> };
  return null;
}
