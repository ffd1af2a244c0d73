import type { Repository } from '../api/repository-types';
import { messageOf } from '../api/problem';
import { useTestRepository } from './queries';

/** Test connection: asks the server where the ref is (git ls-remote), reading nothing else, and shows what it said. */
export function TestRepository({ repository }: { repository: Repository }) {
  const test = useTestRepository(repository.id);
  const at = new Date(test.submittedAt).toLocaleTimeString();
  return (
    <section className="panel">
      <h2>Test connection</h2>
      <p className="muted">
        Asks the server where <span className="mono">{repository.ref}</span> is, with the stored credential, as a run would before it reads a runbook,
        and records the result as its last test.
      </p>
      <button type="button" className="button" onClick={() => test.mutate()} disabled={test.isPending}>
        {test.isPending ? 'Testing…' : 'Test connection'}
      </button>
      <div aria-live="polite" className="test-outcome" data-test-outcome>
        {test.isSuccess && test.data.ok ? (
          <p className="banner banner-info" role="status">
            <span>
              <strong>ok</strong> at {at}: {test.data.message}
            </span>
          </p>
        ) : null}
        {test.isSuccess && !test.data.ok ? (
          <p className="banner banner-error" role="alert">
            <span>
              <strong>Failed</strong> at {at}: {test.data.message}
            </span>
          </p>
        ) : null}
        {test.isError ? (
          <p className="banner banner-error" role="alert">
            <span>
              <strong>Failed</strong> at {at}: {messageOf(test.error)}
            </span>
          </p>
        ) : null}
      </div>
    </section>
  );
}
