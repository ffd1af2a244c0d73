import { messageOf } from '../api/problem';
import { useRole } from '../auth/useRole';
import { CHANNEL_MODES, type Channel, type ChannelMode } from '../api/channel-types';
import { MODE_HELP, MODE_LABELS } from './labels';
import { useSetChannelMode } from './queries';

/** Changes what a channel hears in place, saved at once: a mode is as easy to set back. */
export function ModeSelect({ channel }: { channel: Pick<Channel, 'id' | 'name' | 'mode'> }) {
  const setMode = useSetChannelMode();
  const { can } = useRole();
  const mode = setMode.isPending ? setMode.variables.mode : channel.mode;
  return (
    <span className="cell-pair">
      <select
        aria-label={`Mode of ${channel.name}`}
        title={MODE_HELP[mode]}
        value={mode}
        disabled={setMode.isPending || !can('configure')}
        onChange={(event) => setMode.mutate({ id: channel.id, mode: event.target.value as ChannelMode })}
      >
        {CHANNEL_MODES.map((value) => (
          <option key={value} value={value}>
            {MODE_LABELS[value]}
          </option>
        ))}
      </select>
      {setMode.error ? (
        <span className="field-error" role="alert">
          {messageOf(setMode.error)}
        </span>
      ) : null}
    </span>
  );
}
