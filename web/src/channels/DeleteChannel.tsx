import { useNavigate } from 'react-router';
import type { Channel } from '../api/channel-types';
import { ConfirmedAction } from '../ui/ConfirmedAction';
import { useDeleteChannel } from './queries';

export function DeleteChannel({ channel }: { channel: Channel }) {
  const remove = useDeleteChannel();
  const navigate = useNavigate();
  return (
    <ConfirmedAction
      label="Delete"
      buttonClassName="button button-danger-quiet"
      title={`Delete “${channel.name}”?`}
      confirmLabel="Delete channel"
      mutation={remove}
      onConfirm={() => remove.mutate(channel.id, { onSuccess: () => void navigate('/channels', { replace: true }) })}
    >
      <p>
        <strong>Nothing more is sent to it,</strong> and the messages it still had to send (retries included) are dropped. Its attempts history
        goes with it, and it leaves the escalation contacts{channel.type === 'email' ? ', which stop using its SMTP server' : ''}.
      </p>
      <p>To stop it for a while instead, set its mode to Disabled.</p>
    </ConfirmedAction>
  );
}
