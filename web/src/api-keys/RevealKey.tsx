import { useEffect, useState } from 'react';
import type { IssuedApiKey } from '../api/types';
import { CodeBlock } from '../ui/CodeBlock';
import { Dialog } from '../ui/Dialog';

/**
 * The one time a key is shown: after this dialog, only its last four characters remain. So it
 * closes only when the person says the key is stored: Escape asks first, and leaving the page
 * (reload, closing the tab) makes the browser ask.
 */
export function RevealKey({ issued, onClose }: { issued: IssuedApiKey | null; onClose: () => void }) {
  // The key Escape asked about: a key issued next starts without the question.
  const [askedFor, setAskedFor] = useState<IssuedApiKey | null>(null);
  const asking = issued !== null && askedFor === issued;
  useEffect(() => {
    if (!issued) return;
    const warn = (event: BeforeUnloadEvent) => event.preventDefault();
    window.addEventListener('beforeunload', warn);
    return () => window.removeEventListener('beforeunload', warn);
  }, [issued]);
  return (
    <Dialog open={issued !== null} title={`API key “${issued?.name ?? ''}”`} onClose={onClose} onDismiss={() => setAskedFor(issued)} wide>
      {issued ? (
        <>
          <p className="banner banner-warn">
            <strong>Shown once.</strong> Store it now, in your monitoring tool or secret store: pitcrew keeps only its hash and cannot show it
            again.
          </p>
          <CodeBlock code={issued.apiKey} copyLabel="Copy key" label="API key" />
          <p className="field-hint">
            {issued.scopes.includes('webhook') ? (
              <>
                Webhook URLs take it in place of <code>&lt;api_key&gt;</code>.{' '}
              </>
            ) : null}
            {issued.scopes.includes('enrol') ? (
              <>
                Agents read it from <code>PITCREW_API_KEY</code> to enrol.
              </>
            ) : null}
          </p>
          {asking ? (
            <div className="banner banner-error" role="alert">
              <p>
                <strong>Close without the key?</strong> Once closed, nobody can see it again: a key not stored now must be revoked and issued anew.
              </p>
              <div className="dialog-actions">
                <button type="button" className="button" onClick={() => setAskedFor(null)} autoFocus>
                  Back to the key
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
