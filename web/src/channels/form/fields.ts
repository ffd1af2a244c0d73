import type { ChannelErrors, ChannelForm, StoredSecrets } from './form';

/** What every part of the channel form is given. */
export interface FieldsProps {
  form: ChannelForm;
  update: (patch: Partial<ChannelForm>) => void;
  errors: ChannelErrors;
  /** What the channel being edited already holds; nothing for a new one. */
  stored: StoredSecrets;
}
