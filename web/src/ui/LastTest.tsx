import { CredentialTestBadge } from './Badge';
import { Time } from './Time';

/** What a stored secret's last test recorded (a credential's, a repository's). */
export interface LastTestResult {
  at: string;
  ok: boolean;
  message: string;
}

/** The last "test" of a stored secret: ok or failed, when, and what the other side said. */
export function LastTest({ test }: { test: LastTestResult | null }) {
  if (!test) return <CredentialTestBadge ok={null} />;
  return (
    <span className="last-test">
      <CredentialTestBadge ok={test.ok} /> <Time iso={test.at} />
      {test.message ? <span className="muted"> {test.message}</span> : null}
    </span>
  );
}
