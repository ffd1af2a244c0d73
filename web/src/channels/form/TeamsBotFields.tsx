import { Field } from '../../ui/Field';
import type { FieldsProps } from './fields';
import { SecretInput } from './SecretInput';

/** Teams: the optional Azure Bot that posts approval requests with Approve and Reject. */
export function TeamsBotFields({ form, update, errors, stored }: FieldsProps) {
  return (
    <>
      <h3>Approvals from Teams (optional Azure Bot)</h3>
      <p className="muted">
        With a bot, approval requests come as a card with Approve and Reject. Its messaging endpoint is
        pitcrew’s <span className="mono">/api/v1/chat/teams/activities</span>; see the notifications guide.
      </p>
      <div className="field-row">
        <Field label="Bot app id" error={errors.botAppId} hint="The Azure Bot’s Microsoft App ID. Blank: no bot.">
          <input value={form.botAppId} onChange={(event) => update({ botAppId: event.target.value })} autoComplete="off" spellCheck={false} />
        </Field>
        <SecretInput
          label="Bot app password"
          value={form.botAppPassword}
          onChange={(botAppPassword) => update({ botAppPassword })}
          error={errors.botAppPassword}
          stored={stored.botAppPassword ? 'A password is set.' : null}
          hidden
        />
      </div>
      <Field label="Tenant id (single-tenant bot)" error={errors.botTenantId} hint="Blank for a multi-tenant bot.">
        <input value={form.botTenantId} onChange={(event) => update({ botTenantId: event.target.value })} autoComplete="off" spellCheck={false} />
      </Field>
      <Field label="Service URL" error={errors.serviceUrl} hint="From the activity Teams sends when the bot is added, e.g. https://smba.trafficmanager.net/emea/">
        <input value={form.serviceUrl} onChange={(event) => update({ serviceUrl: event.target.value })} autoComplete="off" spellCheck={false} />
      </Field>
      <Field label="Conversation id" error={errors.conversationId} hint="The Teams channel approvals are posted to, 19:…@thread.tacv2">
        <input value={form.conversationId} onChange={(event) => update({ conversationId: event.target.value })} autoComplete="off" spellCheck={false} />
      </Field>
    </>
  );
}
