import type { Repository } from '../api/repository-types';
import { messageOf } from '../api/problem';
import { TestNow, type TestOutcome } from '../ui/TestNow';
import { useTestRepository } from './queries';

/** Test connection: asks the server where the ref is (git ls-remote), reading nothing else, and shows what it said. */
export function TestRepository({ repository }: { repository: Repository }) {
  const test = useTestRepository(repository.id);
  return (
    <TestNow title="Test connection" button="Test connection" busy="Testing…" test={test} onTest={() => test.mutate()} outcome={(at) => outcomeOf(test, at)}>
      Asks the server where <span className="mono">{repository.ref}</span> is, with the stored credential, as a run would before it reads a runbook, and
      records the result as its last test.
    </TestNow>
  );
}

function outcomeOf(test: ReturnType<typeof useTestRepository>, at: string): TestOutcome | null {
  if (test.isSuccess) return { failed: !test.data.ok, says: <><strong>{test.data.ok ? 'ok' : 'Failed'}</strong> at {at}: {test.data.message}</> };
  if (test.isError) return { failed: true, says: <><strong>Failed</strong> at {at}: {messageOf(test.error)}</> };
  return null;
}
