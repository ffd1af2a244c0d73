import { useMutation, useQueryClient } from '@tanstack/react-query';
import { useState, type FormEvent } from 'react';
import { api } from '../api/client';
import { messageOf, problemAtFields } from '../api/problem';
import { CodeBlock } from '../ui/CodeBlock';
import { Field } from '../ui/Field';
import { PageHeader } from '../ui/PageHeader';
import { ErrorBanner, FormBanner, Loading } from '../ui/states';
import { ME_KEY, useMe } from './me';

/** A secret offered by POST /me/totp: nothing is stored until a code from the app confirms it. */
interface Offer {
  secret: string;
  otpauthUrl: string;
}

// The secret rides in these mutations: gcTime 0 drops it from the cache once no form watches it.
const FORGET_AT_ONCE = { gcTime: 0 };

/** The signed-in person's second factor (TOTP, docs/identity.md): turn it on with a code, or off with one. */
export default function SecondFactorPage() {
  const me = useMe();
  return (
    <>
      <PageHeader
        title="Second factor"
        subtitle="With a second factor, signing in with your password also asks for the 6-digit code an authenticator app (Google Authenticator, 1Password, Aegis…) shows. Single sign-on and personal tokens are not affected."
      />
      {me.isPending ? <Loading what="your account" /> : me.isError ? <ErrorBanner error={me.error} what="your account" /> : me.data.user.totp ? <TurnOff /> : <TurnOn />}
    </>
  );
}

function TurnOn() {
  const queryClient = useQueryClient();
  const offer = useMutation({ ...FORGET_AT_ONCE, mutationFn: () => api<Offer>('/me/totp', { method: 'POST' }) });
  const confirm = useMutation({
    ...FORGET_AT_ONCE,
    mutationFn: (body: { secret: string; code: string }) => api<void>('/me/totp', { method: 'PUT', body }),
    onSuccess: () => queryClient.invalidateQueries({ queryKey: ME_KEY }),
  });
  const [code, setCode] = useState('');
  const [errors, setErrors] = useState<{ code?: string; banner?: string | null }>({});

  if (!offer.data) {
    return (
      <section className="panel" aria-label="second factor">
        <p>
          <strong>Off.</strong> Signing in asks only for your password.
        </p>
        <button type="button" className="button button-primary" onClick={() => offer.mutate()} disabled={offer.isPending}>
          {offer.isPending ? 'Preparing…' : 'Turn on'}
        </button>
        {offer.error ? <ErrorBanner error={offer.error} /> : null}
      </section>
    );
  }
  const { secret, otpauthUrl } = offer.data;
  const submit = (event: FormEvent) => {
    event.preventDefault();
    if (!/^\s*\d{6}\s*$/.test(code)) return setErrors({ code: 'the 6 digits the app shows now' });
    setErrors({});
    confirm.mutate({ secret, code: code.trim() }, {
      onError: (problem) => {
        // The service's words say what to check (the phone's clock), its field error only that it did not match.
        const placed = problemAtFields(problem, (path) => (path === '/body/code' ? 'code' : undefined));
        setErrors(placed.errors.code ? { code: messageOf(problem) } : { banner: placed.banner });
      },
    });
  };
  return (
    <form className="panel" onSubmit={submit} noValidate aria-label="second factor">
      <h2>1. Add pitcrew to your authenticator app</h2>
      <p>
        Make a QR code of this address (or paste it, where the app takes one), or type the secret by hand. They are shown only now: once confirmed, pitcrew keeps the secret sealed and never shows it again.
      </p>
      <CodeBlock code={otpauthUrl} label="Authenticator address" copyLabel="Copy address" />
      <CodeBlock code={secret} label="Secret" copyLabel="Copy secret" />
      <h2>2. Confirm with the code it shows</h2>
      <Field label="Code from the app" error={errors.code} hint="Nothing changes until a code matches.">
        <input value={code} onChange={(event) => setCode(event.target.value)} inputMode="numeric" autoComplete="one-time-code" maxLength={8} />
      </Field>
      <FormBanner banner={errors.banner} />
      <div className="form-actions">
        <button type="submit" className="button button-primary" disabled={confirm.isPending}>
          {confirm.isPending ? 'Checking…' : 'Turn on the second factor'}
        </button>
        <button type="button" className="button" onClick={() => offer.reset()}>
          Cancel
        </button>
      </div>
    </form>
  );
}

function TurnOff() {
  const queryClient = useQueryClient();
  const remove = useMutation({
    mutationFn: (body: { code: string }) => api<void>('/me/totp', { method: 'DELETE', body }),
    onSuccess: () => queryClient.invalidateQueries({ queryKey: ME_KEY }),
  });
  const [code, setCode] = useState('');
  const [errors, setErrors] = useState<{ code?: string; banner?: string | null }>({});
  const submit = (event: FormEvent) => {
    event.preventDefault();
    if (!/^\s*\d{6}\s*$/.test(code)) return setErrors({ code: 'the 6 digits the app shows now' });
    setErrors({});
    remove.mutate({ code: code.trim() }, {
      onError: (problem) => {
        // The service's words say what to check (the phone's clock), its field error only that it did not match.
        const placed = problemAtFields(problem, (path) => (path === '/body/code' ? 'code' : undefined));
        setErrors(placed.errors.code ? { code: messageOf(problem) } : { banner: placed.banner });
      },
    });
  };
  return (
    <form className="panel" onSubmit={submit} noValidate aria-label="second factor">
      <p>
        <strong>On.</strong> Signing in with your password also asks for the code your authenticator app shows.
      </p>
      <Field label="Code from the app" error={errors.code} hint="To turn it off, show you still hold it: the code it shows now.">
        <input value={code} onChange={(event) => setCode(event.target.value)} inputMode="numeric" autoComplete="one-time-code" maxLength={8} />
      </Field>
      <FormBanner banner={errors.banner} />
      <button type="submit" className="button button-danger" disabled={remove.isPending}>
        {remove.isPending ? 'Checking…' : 'Turn off the second factor'}
      </button>
    </form>
  );
}
