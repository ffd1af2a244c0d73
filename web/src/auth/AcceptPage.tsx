import { useQueryClient } from '@tanstack/react-query';
import { useState, type FormEvent } from 'react';
import { useNavigate, useParams } from 'react-router';
import { api } from '../api/client';
import { problemAtFields } from '../api/problem';
import { Field } from '../ui/Field';
import type { Me } from './me';
import { keepCookieSession } from './signed-in';
import { SignInCard } from './SignInCard';

type AcceptField = 'email' | 'password';

/**
 * An invitation's link (or the first owner's, from `pitcrew bootstrap`): set a password and come
 * in signed in. The first owner's account has no e-mail yet: the service asks for it (a field
 * error on /body/email), and the field shows then.
 */
export function AcceptPage() {
  const { invite = '' } = useParams();
  const navigate = useNavigate();
  const queryClient = useQueryClient();
  const [askEmail, setAskEmail] = useState(false);
  const [email, setEmail] = useState('');
  const [password, setPassword] = useState('');
  const [repeat, setRepeat] = useState('');
  const [errors, setErrors] = useState<Partial<Record<AcceptField | 'repeat', string>>>({});
  const [banner, setBanner] = useState<string | null>(null);
  const [busy, setBusy] = useState(false);

  const submit = async (event: FormEvent) => {
    event.preventDefault();
    if (askEmail && !email.trim()) return setErrors({ email: 'give the e-mail you will sign in with' });
    if (password !== repeat) return setErrors({ repeat: 'the two passwords differ' });
    setBusy(true);
    setErrors({});
    setBanner(null);
    try {
      const me = await api<Me>('/auth/accept', { method: 'POST', body: { invite, password, ...(askEmail ? { email: email.trim() } : {}) } });
      keepCookieSession(queryClient, me);
      void navigate('/rules', { replace: true });
    } catch (problem) {
      const placed = problemAtFields<AcceptField>(problem, (path) => (path === '/body/email' ? 'email' : path === '/body/password' ? 'password' : undefined));
      if (placed.errors.email) setAskEmail(true);
      setErrors(placed.errors);
      setBanner(placed.banner);
    } finally {
      setBusy(false);
    }
  };

  return (
    <SignInCard title="Set your password" onSubmit={submit}>
      {banner ? (
        <p className="banner banner-error" role="alert">
          {banner}
        </p>
      ) : null}
      {askEmail ? (
        <Field label="E-mail" error={errors.email} hint="You are the first owner: this is the e-mail you will sign in with.">
          <input type="email" value={email} onChange={(event) => setEmail(event.target.value)} autoComplete="username" autoFocus />
        </Field>
      ) : null}
      <Field label="New password" error={errors.password}>
        <input type="password" value={password} onChange={(event) => setPassword(event.target.value)} autoComplete="new-password" autoFocus={!askEmail} />
      </Field>
      <Field label="Repeat the password" error={errors.repeat}>
        <input type="password" value={repeat} onChange={(event) => setRepeat(event.target.value)} autoComplete="new-password" />
      </Field>
      <button type="submit" className="button button-primary button-block" disabled={busy}>
        {busy ? 'Saving…' : 'Set password and sign in'}
      </button>
    </SignInCard>
  );
}
