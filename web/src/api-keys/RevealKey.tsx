import type { IssuedApiKey } from '../api/types';
import { CodeBlock } from '../ui/CodeBlock';
import { Dialog } from '../ui/Dialog';

/** The one time a key is shown: after this dialog, only its last four characters remain. */
export function RevealKey({ issued, onClose }: { issued: IssuedApiKey | null; onClose: () => void }) {
  return (
    <Dialog open={issued !== null} title={`API key “${issued?.name ?? ''}”`} onClose={onClose} wide>
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
          <div className="dialog-actions">
            <button type="button" className="button button-primary" onClick={onClose}>
              I have stored it
            </button>
          </div>
        </>
      ) : null}
    </Dialog>
  );
}
