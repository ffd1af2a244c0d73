import { useQueryClient } from '@tanstack/react-query';
import { useState, type FormEvent } from 'react';
import { Navigate, useLocation, useNavigate, useSearchParams } from 'react-router';
import { api } from '../api/client';
import { ApiProblem, messageOf } from '../api/problem';
import { Field } from '../ui/Field';
import { Loading } from '../ui/states';
import { ME_KEY, type Me } from './me';
import { lastSessionKind, signInWithToken, signOutReason } from './session';
import { keepCookieSession, rememberedTenant } from './signed-in';
import { SignInCard } from './SignInCard';
import { SsoButtons, useSignInOptions } from './SsoButtons';
import { useSession } from './useSession';

export function SignInPage() {
  const session = useSession();
  const location = useLocation();
  const [search] = useSearchParams();
  const from = (location.state as { from?: string } | null)?.from ?? '/rules';
  const [withToken, setWithToken] = useState(lastSessionKind() === 'token');
  const reason = signOutReason();
  const ssoError = search.get('error');
  const options = useSignInOptions(search.get('tenant') ?? rememberedTenant()).data;

  if (session === 'unknown') return <Loading what="your session" />;
  if (session) return <Navigate to={from} replace />;

  const notices = (
    <>
      {reason ? <p className="banner banner-warn">Your session ended: {reason}</p> : null}
      {ssoError ? <p className="banner banner-error" role="alert">Single sign-on failed: {ssoError}</p> : null}
    </>
  );
  if (withToken) {
    return (
      <TokenSignIn from={from} notices={notices}>
        <button type="button" className="link-button" onClick={() => setWithToken(false)}>
          Use e-mail and password
        </button>
      </TokenSignIn>
    );
  }
  return (
    <PasswordSignIn
      from={from}
      notices={notices}
      above={<SsoButtons providers={options?.items ?? []} passwordSignIn={options?.passwordSignIn ?? true} />}
      passwordOff={options?.passwordSignIn === false}
    >
      <button type="button" className="link-button" onClick={() => setWithToken(true)}>
        Use an API token instead
      </button>
    </PasswordSignIn>
  );
}

interface FormProps {
  from: string;
  notices: React.ReactNode;
  /** Under the form: the way to the other form. */
  children: React.ReactNode;
}

function PasswordSignIn({ from, notices, above, passwordOff, children }: FormProps & { above: React.ReactNode; passwordOff: boolean }) {
  const navigate = useNavigate();
  const queryClient = useQueryClient();
  const [email, setEmail] = useState('');
  const [password, setPassword] = useState('');
  const [totp, setTotp] = useState('');
  // Asked for once the service says the password was right and the account has a second factor.
  const [askCode, setAskCode] = useState(false);
  const [error, setError] = useState<string | null>(null);
  const [locked, setLocked] = useState<string | null>(null);
  const [busy, setBusy] = useState(false);

  const submit = async (event: FormEvent) => {
    event.preventDefault();
    if (!email.trim() || !password) return setError('give the e-mail and the password of your account');
    setBusy(true);
    setError(null);
    setLocked(null);
    try {
      const me = await api<Me>('/auth/login', { method: 'POST', body: { email: email.trim(), password, ...(totp.trim() ? { totp: totp.trim() } : {}) } });
      keepCookieSession(queryClient, me);
      void navigate(from, { replace: true });
    } catch (problem) {
      if (problem instanceof ApiProblem && problem.code === 'PITCREW_ERR_SIGN_IN_LOCKED') setLocked(problem.detail);
      else if (problem instanceof ApiProblem && problem.code === 'PITCREW_ERR_SECOND_FACTOR_REQUIRED') setAskCode(true);
      else setError(messageOf(problem));
    } finally {
      setBusy(false);
    }
  };

  return (
    <SignInCard title="Sign in" onSubmit={submit}>
      {notices}
      {above}
      {locked ? (
        <p className="banner banner-error" role="alert">
          Signing in is locked: {locked}
        </p>
      ) : null}
      {passwordOff ? null : (
        <>
          <Field label="E-mail">
            <input type="email" value={email} onChange={(event) => setEmail(event.target.value)} autoComplete="username" autoFocus />
          </Field>
          <Field label="Password" error={error ?? undefined}>
            <input type="password" value={password} onChange={(event) => setPassword(event.target.value)} autoComplete="current-password" />
          </Field>
          {askCode ? (
            <Field label="Authenticator code" hint="Your account has a second factor: type the 6-digit code your authenticator app shows now.">
              <input value={totp} onChange={(event) => setTotp(event.target.value)} inputMode="numeric" autoComplete="one-time-code" maxLength={16} autoFocus />
            </Field>
          ) : null}
          <button type="submit" className="button button-primary button-block" disabled={busy}>
            {busy ? 'Checking…' : 'Sign in'}
          </button>
          <ForgotPassword email={email} />
        </>
      )}
      {children}
    </SignInCard>
  );
}

/** Asks for a reset link by e-mail; the service answers the same whether or not the address is a member's. */
function ForgotPassword({ email }: { email: string }) {
  const [answer, setAnswer] = useState<string | null>(null);
  const [busy, setBusy] = useState(false);
  const ask = async () => {
    if (!email.trim()) return setAnswer('type your e-mail above first, then ask again');
    setBusy(true);
    try {
      setAnswer((await api<{ detail: string }>('/auth/reset', { method: 'POST', body: { email: email.trim() } })).detail);
    } catch (problem) {
      setAnswer(messageOf(problem));
    } finally {
      setBusy(false);
    }
  };
  return (
    <>
      <button type="button" className="link-button" onClick={() => void ask()} disabled={busy}>
        Forgot password?
      </button>
      {answer ? (
        <p className="field-hint" role="status">
          {answer}
        </p>
      ) : null}
    </>
  );
}

function TokenSignIn({ from, notices, children }: FormProps) {
  const navigate = useNavigate();
  const queryClient = useQueryClient();
  const [candidate, setCandidate] = useState('');
  const [error, setError] = useState<string | null>(null);
  const [busy, setBusy] = useState(false);

  const submit = async (event: FormEvent) => {
    event.preventDefault();
    const trimmed = candidate.trim();
    if (!trimmed) return setError('paste the management token printed by npx pitcrew bootstrap --json');
    setBusy(true);
    setError(null);
    try {
      // The token is kept only once the service accepts it; its answer says the role at once.
      const me = await api<Me>('/me', { token: trimmed });
      queryClient.clear();
      queryClient.setQueryData(ME_KEY, me);
      signInWithToken(trimmed);
      void navigate(from, { replace: true });
    } catch (problem) {
      setError(messageOf(problem));
    } finally {
      setBusy(false);
    }
  };

  return (
    <SignInCard title="Sign in with an API token" onSubmit={submit}>
      {notices}
      <Field
        label="Management token"
        error={error ?? undefined}
        hint={
          <>
            A personal access token (Tokens page), or the one <code>npx pitcrew bootstrap --json</code> prints on the service machine (the{' '}
            <code>token</code> field). It is kept for this browser tab only.
          </>
        }
      >
        <input type="password" value={candidate} onChange={(event) => setCandidate(event.target.value)} autoComplete="off" spellCheck={false} autoFocus placeholder="pct_…" />
      </Field>
      <button type="submit" className="button button-primary button-block" disabled={busy}>
        {busy ? 'Checking…' : 'Sign in'}
      </button>
      {children}
    </SignInCard>
  );
}
