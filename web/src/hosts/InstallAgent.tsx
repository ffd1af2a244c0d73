import { useState } from 'react';
import { Link } from 'react-router';
import { useIssueApiKey } from '../api-keys/queries';
import { messageOf } from '../api/problem';
import { CodeBlock } from '../ui/CodeBlock';
import { ErrorBanner, Loading } from '../ui/states';
import { useAgentInstall } from './queries';

/** The exact commands that put an agent for this service on a host. */
export function InstallAgent() {
  const install = useAgentInstall();
  if (install.isPending) return <Loading what="the install commands" />;
  if (install.isError) return <ErrorBanner error={install.error} what="the install commands" onRetry={() => void install.refetch()} />;
  const info = install.data;
  return (
    <ol className="install-steps">
      <li>
        <AgentKeyStep />
      </li>
      <li>
        <p>Download the agent and check that it is the file this service offers:</p>
        <CodeBlock code={info.install} copyLabel="Copy" label="install command" />
      </li>
      <li>
        <p>
          Start it as a regular user (as root, add <code>--run-as USER</code>). It connects out to <span className="mono">{info.server}</span> and
          pins this service's certificate. If this machine replaces a host of the same name (a reinstall), add <code>--replace</code>:
        </p>
        <CodeBlock code={info.start} copyLabel="Copy" label="start command" />
      </li>
    </ol>
  );
}

/**
 * Agents enrol with a key of their own (scope enrol), never the one in webhook URLs: this step
 * makes one on request and puts it in the export line, the one time it can be shown.
 */
function AgentKeyStep() {
  const issue = useIssueApiKey();
  const [key, setKey] = useState<string | null>(null);
  const make = () => issue.mutate({ name: 'agents', scopes: ['enrol'] }, { onSuccess: (issued) => setKey(issued.apiKey) });
  return (
    <>
      <p>
        On the host, with Node.js 20.19 or newer, give the agent an API key with the <strong>enrol</strong> scope (webhook keys cannot enrol). Make one
        here, or use one from <Link to="/api-keys">API keys</Link>; a key is shown once, when made:
      </p>
      {key ? (
        <>
          <CodeBlock code={`export PITCREW_API_KEY=${key}`} copyLabel="Copy" label="export the API key" />
          <p className="banner banner-warn" role="note">
            <strong>Shown once.</strong> The key “agents” (scope enrol) is on the API keys page from now on, without its value.
          </p>
        </>
      ) : (
        <>
          <CodeBlock code="export PITCREW_API_KEY=…" label="export the API key" />
          <button type="button" className="button" onClick={make} disabled={issue.isPending}>
            {issue.isPending ? 'Making…' : 'Make an agent key'}
          </button>
          {issue.isError ? <p className="field-error" role="alert">{messageOf(issue.error)}</p> : null}
        </>
      )}
    </>
  );
}
