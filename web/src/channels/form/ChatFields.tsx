import { Field } from '../../ui/Field';
import { TYPE_HELP, TYPE_LABELS } from '../labels';
import type { FieldsProps } from './fields';
import { SecretInput } from './SecretInput';

/** Slack, Teams, Mattermost and Google Chat: one webhook URL, which is the secret; Slack may add its app. */
export function ChatFields(props: FieldsProps) {
  const { form, update, errors, stored } = props;
  return (
    <>
      <SecretInput
        label={`${TYPE_LABELS[form.type]} webhook URL`}
        value={form.webhookUrl}
        onChange={(webhookUrl) => update({ webhookUrl })}
        error={errors.webhookUrl}
        stored={stored.webhookUrl ? `Stored: ${stored.webhookUrl}.` : null}
        hint={`${TYPE_HELP[form.type]} Anyone holding it can post there, so pitcrew keeps it sealed and never shows it again.${form.type === 'slack' ? ' Optional with a Slack app below: the app then posts every message.' : ''}`}
      />
      {form.type === 'slack' && <SlackAppFields {...props} />}
    </>
  );
}

/** Optional: a Slack app gives approval requests Approve and Reject buttons, and updates them with the outcome. */
function SlackAppFields({ form, update, errors, stored }: FieldsProps) {
  return (
    <fieldset className="fieldset-plain">
      <legend>Slack app (optional): approve and reject from Slack</legend>
      <p className="muted">
        With these three, approval requests are posted by the app with Approve and Reject buttons, and updated with who decided.
        The app needs the scopes chat:write, users:read and users:read.email, and its Interactivity Request URL set to
        /api/v1/chat/slack/interactions on pitcrew’s public address. Leave them blank for link-only requests.
      </p>
      <Field label="Channel ID" error={errors.channelId} hint="The channel approval requests go to (C…, at the bottom of the channel’s details); invite the app to it.">
        <input className="mono" value={form.channelId} onChange={(event) => update({ channelId: event.target.value })} placeholder="C0123456789" autoComplete="off" spellCheck={false} />
      </Field>
      <SecretInput
        label="Bot token"
        value={form.botToken}
        onChange={(botToken) => update({ botToken })}
        error={errors.botToken}
        stored={stored.botToken ? 'A bot token is set.' : null}
        hint="The app’s Bot User OAuth Token (xoxb-…), under OAuth & Permissions."
        hidden
      />
      <SecretInput
        label="Signing secret"
        value={form.signingSecret}
        onChange={(signingSecret) => update({ signingSecret })}
        error={errors.signingSecret}
        stored={stored.signingSecret ? 'A signing secret is set.' : null}
        hint="Basic Information → App Credentials: pitcrew verifies every button click with it."
        hidden
      />
    </fieldset>
  );
}
