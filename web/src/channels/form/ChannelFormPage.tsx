import { useEffect, useRef, useState, type FormEvent } from 'react';
import { Link, useNavigate, useParams } from 'react-router';
import { CHANNEL_MODES, CHANNEL_TYPES, type Channel } from '../../api/channel-types';
import { ApiProblem, messageOf } from '../../api/problem';
import { Field } from '../../ui/Field';
import { PageHeader } from '../../ui/PageHeader';
import { FormBanner, Loadable } from '../../ui/states';
import { MODE_HELP, MODE_LABELS, TYPE_HELP, TYPE_LABELS } from '../labels';
import { useChannel, useCreateChannel, useUpdateChannel } from '../queries';
import { ChatFields } from './ChatFields';
import { TeamsBotFields } from './TeamsBotFields';
import { EmailFields } from './EmailFields';
import type { FieldsProps } from './fields';
import { channelErrorsFrom, checkChannelForm, emptyChannelForm, formFromChannel, NO_SECRETS, storedSecrets, toChannelInput, toChannelPatch, type ChannelErrors, type ChannelField, type ChannelForm } from './form';
import { RadioChoices } from '../../ui/RadioChoices';
import { RuleFilterPicker } from './RuleFilterPicker';
import { WebhookFields } from './WebhookFields';

/** /channels/new adds a channel; /channels/:id/edit changes one, secrets kept unless retyped. */
export default function ChannelFormPage() {
  const { id } = useParams();
  if (!id) return <ChannelEditor initial={emptyChannelForm()} />;
  return <EditChannel id={id} />;
}

function EditChannel({ id }: { id: string }) {
  const channel = useChannel(id);
  return <Loadable query={channel} what="the channel">{(data) => <ChannelEditor key={data.id} initial={formFromChannel(data)} channel={data} />}</Loadable>;
}

const TYPE_CHOICES = CHANNEL_TYPES.map((type) => ({ value: type, title: TYPE_LABELS[type], text: TYPE_HELP[type] }));
const MODE_CHOICES = CHANNEL_MODES.map((mode) => ({ value: mode, title: MODE_LABELS[mode], text: MODE_HELP[mode] }));

function TypeFields(props: FieldsProps) {
  if (props.form.type === 'email') return <EmailFields {...props} />;
  if (props.form.type === 'webhook') return <WebhookFields {...props} />;
  if (props.form.type === 'teams') return <><ChatFields {...props} /><TeamsBotFields {...props} /></>;
  return <ChatFields {...props} />;
}

function ChannelEditor({ initial, channel }: { initial: ChannelForm; channel?: Channel }) {
  const navigate = useNavigate();
  const create = useCreateChannel();
  const change = useUpdateChannel();
  const saving = create.isPending || change.isPending;
  const [form, setForm] = useState(initial);
  const [errors, setErrors] = useState<ChannelErrors>({});
  const [banner, setBanner] = useState<string | null>(null);
  const body = useRef<HTMLFormElement>(null);
  const stored = channel ? storedSecrets(channel) : NO_SECRETS;

  const update = (patch: Partial<ChannelForm>) => {
    setForm((current) => ({ ...current, ...patch }));
    setErrors((current) => {
      const next = { ...current };
      for (const field of Object.keys(patch) as ChannelField[]) delete next[field];
      return next;
    });
  };

  // Errors to fix move the focus to the first of them; typing never moves it.
  const [focusRequest, setFocusRequest] = useState(0);
  useEffect(() => {
    if (focusRequest === 0 || !body.current) return;
    const invalid = body.current.querySelector<HTMLElement>('[aria-invalid="true"]');
    const inFieldset = body.current.querySelector('.field-error')?.closest('fieldset')?.querySelector<HTMLElement>('input');
    (invalid ?? inFieldset)?.focus();
  }, [focusRequest]);
  const showErrors = (found: ChannelErrors) => {
    setErrors(found);
    setFocusRequest((n) => n + 1);
  };

  const submit = (event: FormEvent) => {
    event.preventDefault();
    const found = checkChannelForm(form, stored);
    if (Object.keys(found).length > 0) return showErrors(found);
    setBanner(null);
    const onSuccess = (saved: Channel) => void navigate(`/channels/${saved.id}`);
    const onError = (error: unknown) => {
      if (error instanceof ApiProblem && error.fieldErrors.length > 0) {
        const { errors: placed, unplaced } = channelErrorsFrom(error.fieldErrors);
        showErrors(placed);
        if (unplaced.length > 0 || Object.keys(placed).length === 0) setBanner(error.detail);
      } else {
        setBanner(messageOf(error));
      }
    };
    if (channel) change.mutate({ id: channel.id, patch: toChannelPatch(form) }, { onSuccess, onError });
    else create.mutate(toChannelInput(form), { onSuccess, onError });
  };

  const parts = { form, update, errors };
  return (
    <>
      <PageHeader
        title={channel ? `Edit ${channel.name}` : 'New channel'}
        subtitle={channel ? `${TYPE_LABELS[channel.type]} channel. Secrets stay as they are unless you type new ones.` : 'Where pitcrew tells people what it did. Send a test message once it is saved.'}
      />
      <form className="panel channel-form" ref={body} onSubmit={submit} noValidate>
        <FormBanner banner={banner} />
        {channel ? null : (
          <RadioChoices legend="Where it posts" layout="choices-three" choices={TYPE_CHOICES} value={form.type} onChange={(type) => update({ type })} error={errors.type} />
        )}
        <Field label="Name" error={errors.name} hint="Shown in lists and in the escalation contacts.">
          <input value={form.name} onChange={(event) => update({ name: event.target.value })} autoFocus autoComplete="off" maxLength={200} />
        </Field>
        <TypeFields {...parts} stored={stored} />
        <RadioChoices legend="What it hears" layout="choices-three" choices={MODE_CHOICES} value={form.mode} onChange={(mode) => update({ mode })} error={errors.mode} />
        <RuleFilterPicker {...parts} />
        <div className="wizard-nav">
          <Link to={channel ? `/channels/${channel.id}` : '/channels'} className="button button-quiet">
            Cancel
          </Link>
          <span className="spacer" />
          <button type="submit" className="button button-primary" disabled={saving}>
            {saving ? 'Saving…' : channel ? 'Save changes' : 'Create channel'}
          </button>
        </div>
      </form>
    </>
  );
}
