import type { RepositoryAuth } from '../api/repository-types';
import { Field } from '../ui/Field';
import { RadioChoices } from '../ui/RadioChoices';
import type { AccessForm, RepositoryErrors } from './repository-form';

const ACCESS_CHOICES: Array<{ value: RepositoryAuth; title: string; text: string }> = [
  { value: 'token', title: 'HTTPS with a token', text: 'A read-only access token (a GitHub fine-grained token with Contents: read, a GitLab deploy token).' },
  { value: 'ssh_key', title: 'SSH with a deploy key', text: 'A read-only deploy key, and the server’s host keys, which are checked on every connection.' },
  { value: 'none', title: 'Public', text: 'Anyone can read it: no credential.' },
];

interface AccessFieldsProps {
  form: AccessForm;
  errors: RepositoryErrors;
  onChange: (patch: Partial<AccessForm>) => void;
  /** The host keys with the deploy key (a new repository); false where they are changed on their own. */
  withKnownHosts?: boolean;
}

/** How pitcrew reads the repository, and the secret that takes: fields never filled from the service. */
export function AccessFields({ form, errors, onChange, withKnownHosts = true }: AccessFieldsProps) {
  return (
    <>
      <RadioChoices legend="Access" layout="choices-three" choices={ACCESS_CHOICES} value={form.access} onChange={(access) => onChange({ access })} error={errors.access} />
      {form.access === 'token' ? (
        <div className="field-row">
          <Field label="Token" error={errors.token} hint="Write-only: stored encrypted, never shown again.">
            <input type="password" className="mono" value={form.token} onChange={(event) => onChange({ token: event.target.value })} autoComplete="off" spellCheck={false} />
          </Field>
          <Field label="User name (optional)" error={errors.username} hint="Sent with the token; default x-access-token (GitHub's). GitLab takes any.">
            <input value={form.username} onChange={(event) => onChange({ username: event.target.value })} autoComplete="off" spellCheck={false} />
          </Field>
        </div>
      ) : null}
      {form.access === 'ssh_key' ? (
        <>
          <Field label="Deploy key" error={errors.sshPrivateKey} hint="An OpenSSH private key without a passphrase. Write-only: stored encrypted, never shown again.">
            <textarea className="mono secret-text" rows={5} value={form.sshPrivateKey} onChange={(event) => onChange({ sshPrivateKey: event.target.value })} placeholder="-----BEGIN OPENSSH PRIVATE KEY-----" autoComplete="off" spellCheck={false} />
          </Field>
          {withKnownHosts ? (
            <Field
              label="Known hosts"
              error={errors.knownHosts}
              hint={
                <>
                  The server&rsquo;s host keys as <code>known_hosts</code> lines: <code>ssh-keyscan HOST</code> prints them; check them against fingerprints you trust.
                </>
              }
            >
              <textarea className="mono" rows={3} value={form.knownHosts} onChange={(event) => onChange({ knownHosts: event.target.value })} spellCheck={false} />
            </Field>
          ) : null}
        </>
      ) : null}
    </>
  );
}
