import { Link } from 'react-router';
import type { Trigger } from '../api/types';
import { CodeBlock } from '../ui/CodeBlock';
import { CopyButton } from '../ui/CopyButton';

/** The webhook URL of a rule and a curl command that fires it, both ready to copy. */
export function WebhookPanel({ trigger }: { trigger: Trigger }) {
  if (!trigger.webhookUrl || !trigger.curl) return null;
  return (
    <section className="panel">
      <h2>Webhook</h2>
      <p className="muted">Point your monitoring tool at this URL (POST, JSON body). Every call is recorded as an event of this rule.</p>
      <div className="copy-row">
        <input className="mono" readOnly value={trigger.webhookUrl} aria-label="Webhook URL" onFocus={(event) => event.currentTarget.select()} />
        <CopyButton text={trigger.webhookUrl} label="Copy URL" />
      </div>
      <h3>Try it with curl</h3>
      <CodeBlock code={trigger.curl} copyLabel="Copy curl" label="curl command" />
      <p className="field-hint">
        The command reads your API key from <code>$PITCREW_API_KEY</code>: run <code>export PITCREW_API_KEY=…</code> first. Keys are shown once,
        when issued; issue a new one on <Link to="/api-keys">API keys</Link>. <code>"Act": false</code> in the body records a dry run.
      </p>
    </section>
  );
}
