import { Link } from 'react-router';
import type { Channel } from '../api/channel-types';
import { useRuleNames } from '../rules/queries';
import { ChannelStatusBadge } from '../ui/Badge';
import { Time } from '../ui/Time';
import { describeRuleFilter, STATUS_HELP, TYPE_LABELS } from './labels';
import { ModeSelect } from './ModeSelect';

export function ChannelsTable({ channels }: { channels: Channel[] }) {
  const names = useRuleNames();
  return (
    <table className="table channels-table">
      <thead>
        <tr>
          <th>Channel</th>
          <th>Type</th>
          <th>Mode</th>
          <th>Status</th>
          <th>Last delivered</th>
          <th>Last error</th>
          <th>Rules</th>
        </tr>
      </thead>
      <tbody>
        {channels.map((channel) => (
          <tr key={channel.id} data-channel={channel.name} className={channel.mode === 'disabled' ? 'row-off' : undefined}>
            <td>
              <Link to={`/channels/${channel.id}`} className="strong-link">
                {channel.name}
              </Link>
            </td>
            <td>{TYPE_LABELS[channel.type]}</td>
            <td>
              <ModeSelect channel={channel} />
            </td>
            <td>
              <ChannelStatusBadge status={channel.status} title={STATUS_HELP[channel.status]} />
            </td>
            <td>
              <Time iso={channel.lastDeliveredAt} />
            </td>
            <td className="cell-reason">
              {channel.lastError ? (
                <>
                  <Time iso={channel.lastErrorAt} />: {channel.lastError}
                </>
              ) : (
                <span className="muted">none</span>
              )}
            </td>
            <td className="cell-reason">{describeRuleFilter(channel.ruleIds, names.data)}</td>
          </tr>
        ))}
      </tbody>
    </table>
  );
}
