import { Link } from 'react-router';
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
        <p>
          On the host, with Node.js 20.19 or newer, give the agent a tenant API key (from <Link to="/api-keys">API keys</Link>; a key is shown
          once, when issued):
        </p>
        <CodeBlock code="export PITCREW_API_KEY=…" label="export the API key" />
      </li>
      <li>
        <p>Download the agent and check that it is the file this service offers:</p>
        <CodeBlock code={info.install} copyLabel="Copy" label="install command" />
      </li>
      <li>
        <p>
          Start it as a regular user (as root, add <code>--run-as USER</code>). It connects out to <span className="mono">{info.server}</span> and
          pins this service's certificate:
        </p>
        <CodeBlock code={info.start} copyLabel="Copy" label="start command" />
      </li>
    </ol>
  );
}
