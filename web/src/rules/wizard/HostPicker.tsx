import { Link } from 'react-router';
import { StatusDot } from '../../ui/Badge';
import { Field } from '../../ui/Field';
import { useHosts } from '../../hosts/queries';

/** Pick one host: type to filter the hosts that have an agent, or name one whose agent comes later. */
export function HostPicker({ hostname, onChange, error }: { hostname: string; onChange: (hostname: string) => void; error?: string }) {
  const hosts = useHosts();
  const typed = hostname.trim().toLowerCase();
  const all = hosts.data?.items ?? [];
  const matching = all.filter((host) => host.hostname.toLowerCase().includes(typed)).slice(0, 8);
  const known = all.some((host) => host.hostname.toLowerCase() === typed);
  return (
    <div className="picker">
      <Field label="Host" error={error} hint="Type to filter the hosts that have an agent, then pick one.">
        <input value={hostname} onChange={(event) => onChange(event.target.value)} autoComplete="off" spellCheck={false} placeholder="web-1" />
      </Field>
      {hosts.isError ? <p className="field-error">Could not list hosts: the name you type is still used.</p> : null}
      {all.length === 0 && hosts.isSuccess ? (
        <p className="field-hint">
          No host has an agent yet. <Link to="/hosts">Connect one</Link>, or name the host now.
        </p>
      ) : (
        <ul className="picker-list" role="listbox" aria-label="hosts">
          {matching.map((host) => (
            <li key={host.id}>
              <button type="button" role="option" aria-selected={host.hostname.toLowerCase() === typed} className="picker-option" onClick={() => onChange(host.hostname)}>
                <StatusDot online={host.status === 'online'} /> <span className="mono">{host.hostname}</span>
                <span className="muted">{host.tags.join(' ')}</span>
              </button>
            </li>
          ))}
        </ul>
      )}
      {typed && !known && hosts.isSuccess ? (
        <p className="banner banner-warn">No host named “{hostname.trim()}” has an agent yet: its events record no_target until its agent connects.</p>
      ) : null}
    </div>
  );
}
