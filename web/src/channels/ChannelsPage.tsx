import { Link } from 'react-router';
import { Can } from '../auth/useRole';
import { PageHeader } from '../ui/PageHeader';
import { EmptyState, Loadable } from '../ui/states';
import { ChannelsTable } from './ChannelsTable';
import { EscalationContactsPanel } from './contacts/EscalationContactsPanel';
import { useChannels } from './queries';

/** Where pitcrew tells people what it did, and who is called when an action limit stops it. */
export default function ChannelsPage() {
  const channels = useChannels();
  return (
    <>
      <PageHeader
        title="Channels"
        subtitle="Where pitcrew reports results and escalations: chat, email or your own webhook. Each channel hears all results, errors only, or nothing."
        actions={
          <Can do="configure">
            <Link to="/channels/new" className="button button-primary">
              Add channel
            </Link>
          </Can>
        }
      />
      <Loadable
        query={channels}
        what="channels"
        isEmpty={(data) => data.items.length === 0}
        empty={
          <EmptyState title="No channels yet">
            <p>
              A channel is a place pitcrew posts to: a Slack, Teams, Mattermost or Google Chat channel, an email list, or a signed webhook to your own
              service. It reports the result of every run (or only the failures) and calls a person when an action limit stops a rule. Until there
              is one, results are only on the executions page.
            </p>
            <Can do="configure">
              <Link to="/channels/new" className="button button-primary">
                Add channel
              </Link>
            </Can>
          </EmptyState>
        }
      >
        {(data) => <ChannelsTable channels={data.items} />}
      </Loadable>
      <EscalationContactsPanel />
    </>
  );
}
