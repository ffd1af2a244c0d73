import { Link, useParams } from 'react-router';
import { Can } from '../auth/useRole';
import type { Channel } from '../api/channel-types';
import { ChannelStatusBadge } from '../ui/Badge';
import { PageHeader } from '../ui/PageHeader';
import { Loadable } from '../ui/states';
import { ChannelAttempts } from './ChannelAttempts';
import { ChannelSettings } from './ChannelSettings';
import { DeleteChannel } from './DeleteChannel';
import { STATUS_HELP, TYPE_LABELS } from './labels';
import { ModeSelect } from './ModeSelect';
import { useChannel } from './queries';
import { SignatureHelp } from './SignatureHelp';
import { TestMessage } from './TestMessage';

export default function ChannelPage() {
  const { id = '' } = useParams();
  const channel = useChannel(id);
  return <Loadable query={channel} what="the channel">{(data) => <ChannelView channel={data} />}</Loadable>;
}

function ChannelView({ channel }: { channel: Channel }) {
  return (
    <>
      <PageHeader
        title={channel.name}
        subtitle={
          <span className="title-with-badge">
            {TYPE_LABELS[channel.type]} <ChannelStatusBadge status={channel.status} title={STATUS_HELP[channel.status]} /> <ModeSelect channel={channel} />
          </span>
        }
        actions={
          <>
            <Can do="configure">
              <Link to={`/channels/${channel.id}/edit`} className="button">
                Edit
              </Link>
            </Can>
            <Can do="configure"><DeleteChannel channel={channel} /></Can>
          </>
        }
      />
      {channel.status === 'failing' && channel.lastError ? (
        <p className="banner banner-error" role="status">
          <span>
            <strong>The last attempt failed:</strong> {channel.lastError}
          </span>
        </p>
      ) : null}
      <div className="columns">
        <ChannelSettings channel={channel} />
        <div>
          <Can do="operate"><TestMessage channel={channel} /></Can>
          {channel.type === 'webhook' ? (
            <section className="panel">
              <h2>Verifying the signature</h2>
              <SignatureHelp />
            </section>
          ) : null}
        </div>
      </div>
      <ChannelAttempts channelId={channel.id} />
    </>
  );
}
