import type { RepositoryTestResult } from '../api/repository-types';
import { CredentialTestBadge } from '../ui/Badge';
import { Time } from '../ui/Time';

/** The last "test connection": ok or failed, when, and what the server said. */
export function LastTest({ test }: { test: RepositoryTestResult | null }) {
  if (!test) return <CredentialTestBadge ok={null} />;
  return (
    <span className="last-test">
      <CredentialTestBadge ok={test.ok} /> <Time iso={test.at} />
      {test.message ? <span className="muted"> {test.message}</span> : null}
    </span>
  );
}
