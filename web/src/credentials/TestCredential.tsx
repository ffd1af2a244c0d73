import type { Credential } from '../api/credential-types';
import { ApiProblem, messageOf } from '../api/problem';
import { duration } from '../ui/format';
import { TestNow, type TestOutcome } from '../ui/TestNow';
import { useTestCredential } from './queries';

/** One harmless read at the provider with the secret (AWS: ec2:DescribeRegions), and what it answered. */
export function TestCredential({ credential }: { credential: Credential }) {
  const test = useTestCredential(credential.id);
  return (
    <TestNow title="Test" button="Test credential" busy="Testing…" test={test} onTest={() => test.mutate()} outcome={(at) => outcomeOf(test, at)}>
      Makes one harmless read at {credential.provider === 'aws' ? 'AWS (ec2:DescribeRegions)' : 'the provider'} with the stored secret, as the cloud
      actions will call it, and records the result as its last test.
    </TestNow>
  );
}

function outcomeOf(test: ReturnType<typeof useTestCredential>, at: string): TestOutcome | null {
  if (test.isSuccess) {
    return { failed: false, says: <><strong>ok</strong> at {at}: {test.data.message} ({test.data.call}, {duration(test.data.durationMs)}).</> };
  }
  if (!test.isError) return null;
  if (notImplemented(test.error)) return { failed: false, says: <><strong>Not tested:</strong> {messageOf(test.error)}</> };
  return { failed: true, says: <><strong>Failed</strong> at {at}: {messageOf(test.error)}</> };
}

// 501: this version cannot test the provider's credentials yet; nothing was refused.
function notImplemented(error: unknown): boolean {
  return error instanceof ApiProblem && error.status === 501;
}
