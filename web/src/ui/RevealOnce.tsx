import { useEffect, useState, type ReactNode } from 'react';
import { CodeBlock } from './CodeBlock';
import { Dialog } from './Dialog';

interface RevealOnceProps {
  /** The secret to show, or null when the dialog is closed. */
  secret: string | null;
  title: string;
  /** What it is ("key", "link"), in the dialog's warnings. */
  what: string;
  copyLabel: string;
  /** The accessible name of the secret itself. */
  label: string;
  /** Where to store it, after "Shown once.". */
  storeIn: ReactNode;
  /** What to do with it, under the secret. */
  children?: ReactNode;
  onClose: () => void;
}

/**
 * The one time a secret (a key, a token, an invitation link) is shown: the service keeps only its
 * hash. So it closes only when the person says it is stored: Escape asks first, and leaving the
 * page (reload, closing the tab) makes the browser ask.
 */
export function RevealOnce({ secret, title, what, copyLabel, label, storeIn, children, onClose }: RevealOnceProps) {
  // The secret Escape asked about: a secret shown next starts without the question.
  const [askedFor, setAskedFor] = useState<string | null>(null);
  const asking = secret !== null && askedFor === secret;
  useEffect(() => {
    if (!secret) return;
    const warn = (event: BeforeUnloadEvent) => event.preventDefault();
    window.addEventListener('beforeunload', warn);
    return () => window.removeEventListener('beforeunload', warn);
  }, [secret]);
  return (
    <Dialog open={secret !== null} title={title} onClose={onClose} onDismiss={() => setAskedFor(secret)} wide>
      {secret ? (
        <>
          <p className="banner banner-warn">
            <strong>Shown once.</strong> {storeIn}
          </p>
          <CodeBlock code={secret} copyLabel={copyLabel} label={label} />
          {children}
          {asking ? (
            <div className="banner banner-error" role="alert">
              <p>
                <strong>Close without the {what}?</strong> Once closed, nobody can see it again: a {what} not stored now must be revoked and issued anew.
              </p>
              <div className="dialog-actions">
                <button type="button" className="button" onClick={() => setAskedFor(null)} autoFocus>
                  Back to the {what}
                </button>
                <button type="button" className="button button-danger" onClick={onClose}>
                  Close, I have stored it
                </button>
              </div>
            </div>
          ) : (
            <div className="dialog-actions">
              <button type="button" className="button button-primary" onClick={onClose}>
                I have stored it
              </button>
            </div>
          )}
        </>
      ) : null}
    </Dialog>
  );
}
