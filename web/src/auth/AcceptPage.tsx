import { useQuery, useQueryClient } from '@tanstack/react-query';
import { useState, type FormEvent } from 'react';
import { Link, useNavigate, useParams } from 'react-router';
import { api } from '../api/client';
import { messageOf, problemAtFields } from '../api/problem';
import { Field } from '../ui/Field';
import { FormBanner, Loading } from '../ui/states';
import type { Me } from './me';
import { keepCookieSession } from './signed-in';
import { SignInCard } from './SignInCard';

type AcceptField = 'email' | 'password' | 'totp';

/** What the link is for (POST /auth/accept/preview): the form is worded by it. */
interface LinkView {
  purpose: 'invite' | 'reset' | 'first_owner';
  email: string | null;
  tenant: string;
  /** An invitation for someone with a password already: they accept with it. */
  existingAccount: boolean;
  /** The account has a second factor: the link signs in, so it takes the app's code too. */
  secondFactor: boolean;
}

/**
 * An invitation's link, a password reset's, or the first owner's (from `pitcrew bootstrap`): the
 * page first asks the service what the link is for, so that each field says what it wants. A new
 * account chooses a password (the first owner also gives their e-mail); an existing account
 * accepts an invitation to one more tenant with its current password, which stays as it is.
 */
export function AcceptPage() {
  const { invite = '' } = useParams();
  const link = useQuery({
    queryKey: ['link', invite],
    queryFn: ({ signal }) => api<LinkView>('/auth/accept/preview', { method: 'POST', body: { invite }, signal }),
    retry: false,
    staleTime: Infinity,
  });
  if (link.isPending) return <Loading what="the link" />;
  if (link.isError) {
    return (
      <SignInCard title="This link does not work">
        <p className="banner banner-error" role="alert">
          {messageOf(link.error)}
        </p>
        <Link to="/sign-in">Go to the sign-in page</Link>
      </SignInCard>
    );
  }
  return <AcceptForm invite={invite} link={link.data} />;
}

function AcceptForm({ invite, link }: { invite: string; link: LinkView }) {
  const navigate = useNavigate();
  const queryClient = useQueryClient();
  const askEmail = link.purpose === 'first_owner';
  const choosing = !link.existingAccount;
  const [email, setEmail] = useState('');
  const [password, setPassword] = useState('');
  const [repeat, setRepeat] = useState('');
  const [totp, setTotp] = useState('');
  const [errors, setErrors] = useState<Partial<Record<AcceptField | 'repeat', string>>>({});
  const [banner, setBanner] = useState<string | null>(null);
  const [busy, setBusy] = useState(false);

  const submit = async (event: FormEvent) => {
    event.preventDefault();
    if (askEmail && !email.trim()) return setErrors({ email: 'give the e-mail you will sign in with' });
    if (!password) return setErrors({ password: choosing ? 'choose a password of 12 characters at least' : 'give the password of your pitcrew account' });
    if (choosing && password !== repeat) return setErrors({ repeat: 'the two passwords differ' });
    if (link.secondFactor && !totp.trim()) return setErrors({ totp: 'give the 6-digit code your authenticator app shows now' });
    setBusy(true);
    setErrors({});
    setBanner(null);
    try {
      const me = await api<Me>('/auth/accept', { method: 'POST', body: { invite, password, ...(askEmail ? { email: email.trim() } : {}), ...(link.secondFactor ? { totp: totp.trim() } : {}) } });
      keepCookieSession(queryClient, me);
      void navigate('/rules', { replace: true });
    } catch (problem) {
      const placed = problemAtFields<AcceptField>(problem, (path) => (path === '/body/email' ? 'email' : path === '/body/password' ? 'password' : path === '/body/totp' ? 'totp' : undefined));
      setErrors(placed.errors);
      setBanner(placed.banner);
    } finally {
      setBusy(false);
    }
  };

  const title = link.existingAccount ? `Join ${link.tenant}` : link.purpose === 'reset' ? 'Choose a new password' : 'Set your password';
  return (
    <SignInCard title={title} onSubmit={submit}>
      {link.existingAccount ? (
        <p className="field-hint">
          You have a pitcrew account already ({link.email}): give its password to join tenant {link.tenant}. It stays your password everywhere.
        </p>
      ) : link.purpose === 'invite' ? (
        <p className="field-hint">
          You are invited to tenant {link.tenant} as {link.email}.
        </p>
      ) : link.purpose === 'reset' ? (
        <p className="field-hint">For {link.email}: the new password replaces the old one, and every session of yours ends.</p>
      ) : null}
      <FormBanner banner={banner} />
      {askEmail ? (
        <Field label="E-mail" error={errors.email} hint="You are the first owner: this is the e-mail you will sign in with.">
          <input type="email" value={email} onChange={(event) => setEmail(event.target.value)} autoComplete="username" autoFocus />
        </Field>
      ) : null}
      {choosing ? (
        <>
          <Field label={link.purpose === 'reset' ? 'Choose a new password' : 'Choose a password'} error={errors.password} hint="12 characters at least.">
            <input type="password" value={password} onChange={(event) => setPassword(event.target.value)} autoComplete="new-password" autoFocus={!askEmail} />
          </Field>
          <Field label="Repeat the password" error={errors.repeat}>
            <input type="password" value={repeat} onChange={(event) => setRepeat(event.target.value)} autoComplete="new-password" />
          </Field>
        </>
      ) : (
        <Field label="Your current password" error={errors.password} hint="Forgot it? Use “Forgot password?” on the sign-in page.">
          <input type="password" value={password} onChange={(event) => setPassword(event.target.value)} autoComplete="current-password" autoFocus />
        </Field>
      )}
      {link.secondFactor ? (
        <Field label="Code of your authenticator app" error={errors.totp} hint="Your account has a second factor: the link signs you in, so it asks for the code as signing in does. Lost the app? An admin of your tenant can remove the second factor.">
          <input inputMode="numeric" value={totp} onChange={(event) => setTotp(event.target.value)} autoComplete="one-time-code" />
        </Field>
      ) : null}
      <button type="submit" className="button button-primary button-block" disabled={busy}>
        {busy ? 'Saving…' : choosing ? 'Set password and sign in' : 'Accept and sign in'}
      </button>
    </SignInCard>
  );
}
