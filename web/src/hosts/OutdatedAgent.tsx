import type { Host } from '../api/types';
import { CodeBlock } from '../ui/CodeBlock';
import { useAgentInstall } from './queries';

/**
 * An agent older than this service keeps working (docs/agent.md, Versions); this says so and
 * gives the command that puts this service's agent in its place on the host.
 */
export function OutdatedAgent({ host }: { host: Host }) {
  const install = useAgentInstall();
  const service = install.data?.version;
  return (
    <details className="outdated-agent">
      <summary>
        <span className="badge badge-warn" title="an older release than this service: it keeps working; update it when you can">
          outdated: {host.agentVersion}{service ? `, server ${service}` : ''}
        </span>
      </summary>
      {install.data ? (
        <>
          <p>On {host.hostname}, replace the agent with this service's and restart it (its enrolment stays):</p>
          <CodeBlock code={install.data.update} copyLabel="Copy" label={`update command for ${host.hostname}`} />
        </>
      ) : (
        <p className="muted">{install.isError ? 'The update command could not be loaded.' : 'Loading the update command…'}</p>
      )}
    </details>
  );
}
