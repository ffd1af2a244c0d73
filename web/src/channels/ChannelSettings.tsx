import type { Channel } from '../api/channel-types';
import { useRuleNames } from '../rules/queries';
import { Definitions, type Definition } from '../ui/Definitions';
import { Time } from '../ui/Time';
import { describeRuleFilter, MODE_HELP, MODE_LABELS, TYPE_LABELS } from './labels';

const set = (isSet: boolean | undefined) => (isSet ? 'set (write-only)' : 'not set');

/** What the channel is configured with, secrets as the service masks them. */
function configRows(channel: Channel): Definition[] {
  const { config } = channel;
  switch (channel.type) {
    case 'email':
      return [
        ['SMTP server', <span className="mono">{`${config.host ?? ''}:${config.port ?? ''}`}</span>],
        ['Encryption', config.secure ? 'TLS from the first byte' : config.requireTls === false ? 'STARTTLS when offered (a local relay)' : 'STARTTLS, required'],
        ['Sign in', config.username ? <span>{config.username}, password {set(config.passwordSet)}</span> : 'no SMTP AUTH'],
        ['From', config.from ?? ''],
        ['To', (config.to ?? []).join(', ')],
        ['Trusted CA', config.ca ? 'a PEM certificate of its own' : 'the system’s'],
      ];
    case 'webhook':
      return [
        ['URL', <span className="mono">{config.url ?? ''}</span>],
        ['Signing secret', set(config.secretSet)],
      ];
    case 'teams':
      return [
        ['Webhook URL', <span className="mono">{config.webhookUrl ?? 'not set'}</span>],
        ['Approvals bot', config.botAppId
          ? <span><span className="mono">{config.botAppId}</span>{config.botTenantId ? ` (tenant ${config.botTenantId})` : ''}, password {set(config.botAppPasswordSet)}; posts to <span className="mono">{config.conversationId ?? ''}</span> at <span className="mono">{config.serviceUrl ?? ''}</span></span>
          : <span className="muted">none: approval requests come without Approve and Reject</span>],
      ];
    case 'slack':
      return [
        ['Webhook URL', <span className="mono">{config.webhookUrl ?? 'none: the app posts every message'}</span>],
        ['Slack app', config.channelId
          ? <span>posts to <span className="mono">{config.channelId}</span>, bot token {set(config.botTokenSet)}, signing secret {set(config.signingSecretSet)}</span>
          : <span className="muted">none: approval requests come without Approve and Reject</span>],
      ];
    default:
      return [['Webhook URL', <span className="mono">{config.webhookUrl ?? 'not set'}</span>]];
  }
}

export function ChannelSettings({ channel }: { channel: Channel }) {
  const names = useRuleNames();
  return (
    <section className="panel">
      <h2>Settings</h2>
      <Definitions
        items={[
          ['Type', TYPE_LABELS[channel.type]],
          ['Hears', `${MODE_LABELS[channel.mode]}: ${MODE_HELP[channel.mode]}`],
          ['Rules', describeRuleFilter(channel.ruleIds, names.data)],
          ...configRows(channel),
          ['Last delivered', <Time iso={channel.lastDeliveredAt} />],
          ['Last error', channel.lastError ? <span><Time iso={channel.lastErrorAt} />: {channel.lastError}</span> : <span className="muted">none</span>],
        ]}
      />
    </section>
  );
}
