import { useState } from 'react';
import { Can } from '../auth/useRole';
import type { Host } from '../api/types';
import { ConfirmedAction } from '../ui/ConfirmedAction';
import { StatusDot } from '../ui/Badge';
import { PageHeader } from '../ui/PageHeader';
import { EmptyState, Loadable } from '../ui/states';
import { Time } from '../ui/Time';
import { HostHistory } from './HostHistory';
import { HostTags } from './HostTagsEditor';
import { InstallAgent } from './InstallAgent';
import { OutdatedAgent } from './OutdatedAgent';
import { useForgetHost, useHosts } from './queries';
import { TableScroll } from '../ui/TableScroll';

export default function HostsPage() {
  const hosts = useHosts({ live: true });
  const [showInstall, setShowInstall] = useState(false);
  const count = hosts.data?.items.length ?? 0;
  const online = hosts.data?.items.filter((host) => host.status === 'online').length ?? 0;
  return (
    <>
      <PageHeader
        title="Hosts"
        subtitle={hosts.data && count > 0 ? `${count} ${count === 1 ? 'host' : 'hosts'}, ${online} online. A host is known through its agent.` : 'A host is known through its agent.'}
        actions={
          count > 0 ? (
            <button type="button" className="button" aria-expanded={showInstall} onClick={() => setShowInstall(!showInstall)}>
              {showInstall ? 'Hide install commands' : 'Connect a host'}
            </button>
          ) : null
        }
      />
      {showInstall && count > 0 ? (
        <section className="panel">
          <h2>Connect a host</h2>
          <Can do="configure"><InstallAgent /></Can>
        </section>
      ) : null}
      <Loadable
        query={hosts}
        what="hosts"
        isEmpty={(data) => data.items.length === 0}
        empty={
          <EmptyState title="No host has an agent yet">
            <p>Scripts run on hosts through pitcrew's agent. It connects out to this service, so the host needs no open port. On each host:</p>
            <Can do="configure"><InstallAgent /></Can>
            <p className="muted">The host shows here within seconds of its agent starting.</p>
          </EmptyState>
        }
      >
        {(data) => <HostsTable hosts={data.items} />}
      </Loadable>
    </>
  );
}

function HostsTable({ hosts }: { hosts: Host[] }) {
  return (
    <TableScroll>
      <table className="table">
        <thead>
          <tr>
            <th>Host</th>
            <th>Status</th>
            <th>Tags</th>
            <th>Agent</th>
            <th>System</th>
            <th>Last seen</th>
            <th aria-label="actions" />
          </tr>
        </thead>
        <tbody>
          {hosts.map((host) => (
            <tr key={host.id} data-host={host.hostname}>
              <td className="mono strong">{host.hostname}</td>
              <td>
                <span className="cell-pair">
                  <StatusDot online={host.status === 'online'} /> {host.status}
                </span>
              </td>
              <td>
                <HostTags host={host} />
              </td>
              <td>
                {host.outdated ? <OutdatedAgent host={host} /> : <span className="mono">{host.agentVersion}</span>}
              </td>
              <td className="muted">
                {host.os} · {host.arch}
              </td>
              <td>{host.status === 'online' ? <span>now</span> : <Time iso={host.lastSeenAt} />}</td>
              <td>
                <span className="cell-pair">
                  <HostHistory host={host} />
                  <Can do="configure"><ForgetHost host={host} /></Can>
                </span>
              </td>
            </tr>
          ))}
        </tbody>
      </table>
    </TableScroll>
  );
}

function ForgetHost({ host }: { host: Host }) {
  const forget = useForgetHost();
  return (
    <ConfirmedAction
      label="Forget"
      buttonClassName="link-button link-danger"
      title={`Forget ${host.hostname}?`}
      confirmLabel="Forget host"
      mutation={forget}
      onConfirm={(close) => forget.mutate(host.id, { onSuccess: close })}
    >
      <p>
        Its agent's credential stops working at once and no rule targets it any more. Its executions stay on record. To bring it back, its
        agent enrols again with an API key that has the enrol scope.
      </p>
    </ConfirmedAction>
  );
}
