import type { ReactNode } from 'react';

/** What the last press of a test button came to: `failed` shows as an alert, the rest as a status. */
export interface TestOutcome {
  failed: boolean;
  says: ReactNode;
}

interface TestNowProps {
  title: string;
  /** What the test does, said above the button. */
  children: ReactNode;
  button: string;
  /** The button's label while the test runs ("Testing…"). */
  busy: string;
  test: { isPending: boolean; submittedAt: number };
  onTest: () => void;
  /** The outcome of the last press, given the time it was made; null before any press and while it runs. */
  outcome: (at: string) => TestOutcome | null;
}

/** A "test it now" panel (a credential, a repository, a channel): the button, and what the other side answered, announced. */
export function TestNow({ title, children, button, busy, test, onTest, outcome }: TestNowProps) {
  const shown = outcome(new Date(test.submittedAt).toLocaleTimeString());
  return (
    <section className="panel">
      <h2>{title}</h2>
      <p className="muted">{children}</p>
      <button type="button" className="button" onClick={onTest} disabled={test.isPending}>
        {test.isPending ? busy : button}
      </button>
      <div aria-live="polite" className="test-outcome" data-test-outcome>
        {shown ? (
          <p className={`banner ${shown.failed ? 'banner-error' : 'banner-info'}`} role={shown.failed ? 'alert' : 'status'}>
            <span>{shown.says}</span>
          </p>
        ) : null}
      </div>
    </section>
  );
}
