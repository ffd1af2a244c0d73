import { useState, type ReactNode } from 'react';
import { Link } from 'react-router';
import type { Integration } from '../api/integration-types';
import { CopyButton } from '../ui/CopyButton';

const API_KEY = /^[0-9a-f]{64}$/;

/**
 * The URL the tool posts to. It holds an API key, which pitcrew keeps only hashed: the person
 * pastes theirs to fill it in, here in the browser, and copies the whole URL (or the steps' snippets).
 */
export function IntegrationUrl({ integration, children }: { integration: Integration; children: (url: string) => ReactNode }) {
  const [key, setKey] = useState('');
  const filled = API_KEY.test(key.trim()) ? integration.url.replace('<api_key>', key.trim()) : integration.url;
  return (
    <>
      <div className="copy-row">
        <input className="mono" readOnly value={filled} aria-label="Integration URL" onFocus={(event) => event.currentTarget.select()} />
        <CopyButton text={filled} label="Copy URL" />
      </div>
      <p className="field-hint">
        <code>&lt;api_key&gt;</code> is an API key with the webhook scope: the URL authenticates the tool, so keep it secret. Keys are shown once, when
        issued on <Link to="/api-keys">API keys</Link>; paste yours to fill it in (it stays in this browser tab):
      </p>
      <input
        type="password"
        className="mono"
        aria-label="API key for the URL"
        placeholder="paste an API key"
        value={key}
        onChange={(event) => setKey(event.target.value)}
        autoComplete="off"
      />
      {children(filled)}
    </>
  );
}
