import { useQueryClient } from '@tanstack/react-query';
import { useState, type FormEvent } from 'react';
import { Navigate, useLocation, useNavigate } from 'react-router';
import { api } from '../api/client';
import { messageOf } from '../api/problem';
import type { Tenant } from '../api/types';
import { Field } from '../ui/Field';
import { signIn, signOutReason } from './session';
import { useToken } from './useToken';

export function SignInPage() {
  const token = useToken();
  const navigate = useNavigate();
  const location = useLocation();
  const queryClient = useQueryClient();
  const from = (location.state as { from?: string } | null)?.from ?? '/rules';
  const [candidate, setCandidate] = useState('');
  const [error, setError] = useState<string | null>(null);
  const [busy, setBusy] = useState(false);
  const reason = signOutReason();

  if (token) return <Navigate to={from} replace />;

  const submit = async (event: FormEvent) => {
    event.preventDefault();
    const trimmed = candidate.trim();
    if (!trimmed) {
      setError('paste the management token printed by npx pitcrew bootstrap --json');
      return;
    }
    setBusy(true);
    setError(null);
    try {
      // The token is kept only once the service accepts it.
      await api<Tenant>('/tenant', { token: trimmed });
      queryClient.clear();
      signIn(trimmed);
      void navigate(from, { replace: true });
    } catch (problem) {
      setError(messageOf(problem));
    } finally {
      setBusy(false);
    }
  };

  return (
    <main className="sign-in">
      <form className="sign-in-card" onSubmit={submit} noValidate>
        <div className="brand brand-large">
          <img src="/favicon.svg" alt="" width="28" height="28" /> pitcrew
        </div>
        <h1>Sign in</h1>
        {reason && !error ? <p className="banner banner-warn">Your session ended: {reason}</p> : null}
        <Field
          label="Management token"
          error={error ?? undefined}
          hint={
            <>
              On the service machine, <code>npx pitcrew bootstrap --json</code> prints one (the <code>token</code> field). It is kept
              for this browser tab only.
            </>
          }
        >
          <input type="password" value={candidate} onChange={(event) => setCandidate(event.target.value)} autoComplete="off" spellCheck={false} autoFocus placeholder="pct_…" />
        </Field>
        <button type="submit" className="button button-primary button-block" disabled={busy}>
          {busy ? 'Checking…' : 'Sign in'}
        </button>
      </form>
    </main>
  );
}
