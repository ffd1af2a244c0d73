import { useState, type FormEvent } from 'react';
import { EditableBy } from '../../auth/useRole';
import type { Channel, EscalationContacts } from '../../api/channel-types';
import { ApiProblem, messageOf } from '../../api/problem';
import { Field } from '../../ui/Field';
import { NamedOptions } from '../../ui/Options';
import { FormBanner, Loadable, Loading } from '../../ui/states';
import { Time } from '../../ui/Time';
import { badAddress, splitAddresses } from '../addresses';
import { TYPE_LABELS } from '../labels';
import { useChannels, useEscalationContacts, useSaveEscalationContacts } from '../queries';

type ContactsField = 'emails' | 'channelIds' | 'emailChannelId';
type ContactsErrors = Partial<Record<ContactsField, string>>;
const FIELDS: readonly ContactsField[] = ['emails', 'channelIds', 'emailChannelId'];

/** Who is called when an action limit stops a rule, and who receives email runbooks by default. */
export function EscalationContactsPanel() {
  const contacts = useEscalationContacts();
  const channels = useChannels();
  return (
    <section className="panel" aria-labelledby="contacts-title">
      <h2 id="contacts-title">Escalation contacts</h2>
      <p className="muted">
        When an action limit stops a rule on a host, pitcrew calls a person instead of acting again: once per rule, host and window. These
        addresses also receive the email runbook of a rule that names no recipients.
      </p>
      {channels.isPending ? (
        <Loading what="escalation contacts" />
      ) : (
        <Loadable query={contacts} what="escalation contacts">
          {(data) => <ContactsForm contacts={data} channels={channels.data?.items ?? []} />}
        </Loadable>
      )}
    </section>
  );
}

function ContactsForm({ contacts, channels }: { contacts: EscalationContacts; channels: Channel[] }) {
  const save = useSaveEscalationContacts();
  const [emails, setEmails] = useState(contacts.emails.join('\n'));
  const [channelIds, setChannelIds] = useState(contacts.channelIds);
  const [emailChannelId, setEmailChannelId] = useState(contacts.emailChannelId ?? '');
  const [errors, setErrors] = useState<ContactsErrors>({});
  const [banner, setBanner] = useState<string | null>(null);
  const emailChannels = channels.filter((channel) => channel.type === 'email');

  const submit = (event: FormEvent) => {
    event.preventDefault();
    const addresses = splitAddresses(emails);
    const bad = badAddress(addresses);
    if (bad) return setErrors({ emails: `“${bad}” is not an email address` });
    setErrors({});
    setBanner(null);
    save.mutate(
      { emails: addresses, channelIds, emailChannelId: emailChannelId || null },
      {
        onSuccess: (saved) => {
          setEmails(saved.emails.join('\n'));
          setChannelIds(saved.channelIds);
          setEmailChannelId(saved.emailChannelId ?? '');
        },
        onError: (error) => {
          const placed: ContactsErrors = {};
          for (const fieldError of error instanceof ApiProblem ? error.fieldErrors : []) {
            const field = FIELDS.find((name) => name === fieldError.path.split('/')[2]);
            if (field) placed[field] ??= fieldError.message;
          }
          setErrors(placed);
          if (Object.keys(placed).length === 0) setBanner(messageOf(error));
        },
      },
    );
  };

  return (
    <form onSubmit={submit} noValidate>
      <EditableBy do="configure">
        <FormBanner banner={banner} />
        <div className="columns">
          <div>
            <Field label="On-call addresses" error={errors.emails} hint="One a line.">
              <textarea rows={4} className="mono" value={emails} onChange={(event) => setEmails(event.target.value)} placeholder="oncall@example.com" spellCheck={false} />
            </Field>
            <Field
              label="Sent through"
              error={errors.emailChannelId}
              hint={emailChannels.length === 0 ? 'Addresses need an email channel’s SMTP server: add an email channel first (its mode may be Disabled).' : 'The email channel whose SMTP server sends to these addresses, whatever its mode.'}
            >
              <select value={emailChannelId} onChange={(event) => setEmailChannelId(event.target.value)}>
                <option value="">{emailChannels[0] ? `The first email channel (${emailChannels[0].name})` : 'No email channel yet'}</option>
                <NamedOptions items={emailChannels} />
              </select>
            </Field>
          </div>
          <ChannelChecklist channels={channels} picked={channelIds} onChange={setChannelIds} error={errors.channelIds} />
        </div>
        <div className="form-actions">
          <button type="submit" className="button button-primary" disabled={save.isPending}>
            {save.isPending ? 'Saving…' : 'Save contacts'}
          </button>
          <span className="muted" role="status">
            {save.isSuccess ? 'Saved. ' : null}
            {contacts.updatedAt ? (
              <>
                Last saved <Time iso={contacts.updatedAt} />.
              </>
            ) : (
              'Not set yet.'
            )}
          </span>
        </div>
      </EditableBy>
    </form>
  );
}

function ChannelChecklist({ channels, picked, onChange, error }: { channels: Channel[]; picked: string[]; onChange: (ids: string[]) => void; error?: string }) {
  const toggle = (id: string, on: boolean) => onChange(on ? [...picked, id] : picked.filter((one) => one !== id));
  return (
    <fieldset aria-describedby="contact-channels-hint">
      <legend>Channels that hear every escalation</legend>
      <p className="field-hint" id="contact-channels-hint">
        Whatever their mode (unless disabled) and rule filter. Channels whose mode hears errors of the rule are told anyway.
      </p>
      {channels.length === 0 ? <p className="muted">None to pick yet: add a channel first.</p> : null}
      <ul className="plain-list">
        {channels.map((channel) => (
          <li key={channel.id}>
            <label className="checkbox">
              <input type="checkbox" checked={picked.includes(channel.id)} onChange={(event) => toggle(channel.id, event.target.checked)} />
              {channel.name} <span className="muted">{TYPE_LABELS[channel.type]}{channel.mode === 'disabled' ? ' · disabled: hears nothing' : ''}</span>
            </label>
          </li>
        ))}
      </ul>
      {error ? (
        <p className="field-error" role="alert">
          {error}
        </p>
      ) : null}
    </fieldset>
  );
}
