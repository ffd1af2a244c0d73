import type { IssuedApiKey } from '../api/types';
import { RevealOnce } from '../ui/RevealOnce';

/** The one time an API key is shown: after this dialog, only its last four characters remain. */
export function RevealKey({ issued, onClose }: { issued: IssuedApiKey | null; onClose: () => void }) {
  return (
    <RevealOnce
      secret={issued?.apiKey ?? null}
      title={`API key “${issued?.name ?? ''}”`}
      what="key"
      copyLabel="Copy key"
      label="API key"
      storeIn="Store it now, in your monitoring tool or secret store: pitcrew keeps only its hash and cannot show it again."
      onClose={onClose}
    >
      <p className="field-hint">
        {issued?.scopes.includes('webhook') ? (
          <>
            Webhook URLs take it in place of <code>&lt;api_key&gt;</code>.{' '}
          </>
        ) : null}
        {issued?.scopes.includes('enrol') ? (
          <>
            Agents read it from <code>PITCREW_API_KEY</code> to enrol.
          </>
        ) : null}
      </p>
    </RevealOnce>
  );
}
