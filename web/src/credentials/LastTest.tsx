import type { CredentialTestResult } from '../api/credential-types';
import { CredentialTestBadge } from '../ui/Badge';
import { Time } from '../ui/Time';

/** The last "test credential": ok or failed, when, and what the provider said. */
export function LastTest({ test }: { test: CredentialTestResult | null }) {
  if (!test) return <CredentialTestBadge ok={null} />;
  return (
    <span className="last-test">
      <CredentialTestBadge ok={test.ok} /> <Time iso={test.at} />
      {test.message ? <span className="muted"> {test.message}</span> : null}
    </span>
  );
}
