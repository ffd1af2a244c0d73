import type { ApiKey, ApiKeyScope } from '../api/types';
import { Can } from '../auth/useRole';
import { ScopeBadge } from '../ui/Badge';
import { ConfirmedAction } from '../ui/ConfirmedAction';
import { useNarrowApiKey } from './queries';

export type KeyPurpose = 'webhook' | 'enrol' | 'both';

export const PURPOSE_SCOPES: Record<KeyPurpose, ApiKeyScope[]> = { webhook: ['webhook'], enrol: ['enrol'], both: ['webhook', 'enrol'] };

export function hasBothScopes(key: ApiKey): boolean {
  return key.scopes.includes('webhook') && key.scopes.includes('enrol');
}

/** A key's scopes; a current key with both says why that is risky and offers to narrow it. */
export function KeyScopes({ apiKey }: { apiKey: ApiKey }) {
  const both = hasBothScopes(apiKey) && !apiKey.revokedAt;
  return (
    <span className="cell-pair" data-scopes={apiKey.scopes.join(' ')}>
      {apiKey.scopes.map((scope) => (
        <ScopeBadge key={scope} scope={scope} />
      ))}
      {both ? (
        <>
          <Can do="configure"><NarrowKey apiKey={apiKey} keep="webhook" /></Can>
          <Can do="configure"><NarrowKey apiKey={apiKey} keep="enrol" /></Can>
        </>
      ) : null}
    </span>
  );
}

function NarrowKey({ apiKey, keep }: { apiKey: ApiKey; keep: ApiKeyScope }) {
  const narrow = useNarrowApiKey();
  const dropped = keep === 'webhook' ? 'enrol agents' : 'fire webhooks';
  return (
    <ConfirmedAction
      label={`Keep ${keep} only`}
      buttonClassName="link-button"
      title={`Narrow “${apiKey.name}” (…${apiKey.hint}) to ${keep}?`}
      confirmLabel={`Keep ${keep} only`}
      mutation={narrow}
      onConfirm={(close) => narrow.mutate({ id: apiKey.id, scopes: [keep] }, { onSuccess: close })}
    >
      <p>
        <strong>From the next call on, this key cannot {dropped}</strong>, on every node: {keep === 'webhook'
          ? 'enrolments with it are refused with 403. Agents already enrolled keep their own credential and stay connected; new agents need a key with the enrol scope.'
          : 'webhook calls with it are refused with 403. Monitoring tools that use it need a key with the webhook scope.'}
      </p>
      <p>A scope taken away is not given back: for that, issue a new key.</p>
    </ConfirmedAction>
  );
}
