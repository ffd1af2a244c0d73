import { TYPE_HELP, TYPE_LABELS } from '../labels';
import type { FieldsProps } from './fields';
import { SecretInput } from './SecretInput';

/** Slack, Teams, Mattermost and Google Chat: one webhook URL, which is the secret. */
export function ChatFields({ form, update, errors, stored }: FieldsProps) {
  return (
    <SecretInput
      label={`${TYPE_LABELS[form.type]} webhook URL`}
      value={form.webhookUrl}
      onChange={(webhookUrl) => update({ webhookUrl })}
      error={errors.webhookUrl}
      stored={stored.webhookUrl ? `Stored: ${stored.webhookUrl}.` : null}
      hint={`${TYPE_HELP[form.type]} Anyone holding it can post there, so pitcrew keeps it sealed and never shows it again.`}
    />
  );
}
