import type { Credential } from '../api/credential-types';
import { ApiProblem, messageOf } from '../api/problem';
import { duration } from '../ui/format';
import { useTestCredential } from './queries';

/** One harmless read at the provider with the secret (AWS: ec2:DescribeRegions), and what it answered. */
export function TestCredential({ credential }: { credential: Credential }) {
  const test = useTestCredential(credential.id);
  const at = new Date(test.submittedAt).toLocaleTimeString();
  return (
    <section className="panel">
      <h2>Test</h2>
      <p className="muted">
        Makes one harmless read at {credential.provider === 'aws' ? 'AWS (ec2:DescribeRegions)' : 'the provider'} with the stored secret, as the
        cloud actions will call it, and records the result as its last test.
      </p>
      <button type="button" className="button" onClick={() => test.mutate()} disabled={test.isPending}>
        {test.isPending ? 'Testing…' : 'Test credential'}
      </button>
      <div aria-live="polite" className="test-outcome" data-test-outcome>
        {test.isSuccess ? (
          <p className="banner banner-info" role="status">
            <span>
              <strong>ok</strong> at {at}: {test.data.message} ({test.data.call}, {duration(test.data.durationMs)}).
            </span>
          </p>
        ) : null}
        {test.isError && notImplemented(test.error) ? (
          <p className="banner banner-info" role="status">
            <span>
              <strong>Not tested:</strong> {messageOf(test.error)}
            </span>
          </p>
        ) : null}
        {test.isError && !notImplemented(test.error) ? (
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

// 501: this version cannot test the provider's credentials yet; nothing was refused.
function notImplemented(error: unknown): boolean {
  return error instanceof ApiProblem && error.status === 501;
}
