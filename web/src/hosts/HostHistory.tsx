import { useState } from 'react';
import type { Host, HostEnrolment } from '../api/types';
import { CodeBlock } from '../ui/CodeBlock';
import { Dialog } from '../ui/Dialog';
import { EmptyState, Loadable } from '../ui/states';
import { Time } from '../ui/Time';
import { useAgentInstall, useHostHistory } from './queries';

/**
 * Who took this host's name, and how to replace it: a reinstalled machine enrols with --replace,
 * and each replacement shows here with its key and address, so one nobody made stands out.
 */
export function HostHistory({ host }: { host: Host }) {
  const [open, setOpen] = useState(false);
  const history = useHostHistory(host.id, open);
  return (
    <>
      <button type="button" className="link-button" onClick={() => setOpen(true)}>
        History and replace
      </button>
      <Dialog open={open} title={`${host.hostname}: enrolments`} onClose={() => setOpen(false)} wide>
        <Loadable query={history} what="the host's history" isEmpty={(data) => data.items.length === 0} empty={<EmptyState title="No enrolment recorded">This host enrolled before pitcrew kept a history.</EmptyState>}>
          {(data) => <EnrolmentsTable items={data.items} />}
        </Loadable>
        <ReplaceHost host={host} />
        <div className="dialog-actions">
          <button type="button" className="button button-primary" onClick={() => setOpen(false)}>
            Close
          </button>
        </div>
      </Dialog>
    </>
  );
}

function EnrolmentsTable({ items }: { items: HostEnrolment[] }) {
  return (
    <table className="table" aria-label="enrolments">
      <thead>
        <tr>
          <th>When</th>
          <th>What</th>
          <th>API key</th>
          <th>From</th>
          <th>Agent</th>
        </tr>
      </thead>
      <tbody>
        {items.map((item) => (
          <tr key={item.id} data-enrolment={item.kind}>
            <td>
              <Time iso={item.at} />
            </td>
            <td>{item.kind === 'enrolled' ? 'enrolled' : `replaced${item.wasOnline ? ' (its agent was online)' : ''}`}</td>
            <td>{item.apiKeyName}</td>
            <td className="mono">{item.sourceIp}</td>
            <td className="muted">
              {item.agentVersion} · {item.os}
            </td>
          </tr>
        ))}
      </tbody>
    </table>
  );
}

function ReplaceHost({ host }: { host: Host }) {
  const install = useAgentInstall();
  const start = install.data ? `${install.data.start} --hostname ${host.hostname} --replace` : `pitcrew-agent … --hostname ${host.hostname} --replace`;
  return (
    <section>
      <h3>Replace this host</h3>
      <p>
        A machine that replaces {host.hostname} (a reinstall, a rebuilt server) enrols with <code>--replace</code>: it takes the host, its tags and its
        queued work, and the current agent's credential stops working. Without it, an enrolment under this name is refused (409), whether the host is
        online or not.
      </p>
      <CodeBlock code={start} copyLabel="Copy" label="replace command" />
      <p className="muted">A replacement you did not make means an enrol key has leaked: revoke it on the API keys page.</p>
    </section>
  );
}
