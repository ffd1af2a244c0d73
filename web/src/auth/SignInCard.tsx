import type { FormEvent, ReactNode } from 'react';

/** The card of the pages a person sees before being signed in (sign-in, invitation). */
export function SignInCard({ title, onSubmit, children }: { title: string; onSubmit?: (event: FormEvent) => void; children: ReactNode }) {
  return (
    <main className="sign-in">
      <form className="sign-in-card" onSubmit={onSubmit} noValidate>
        <div className="brand brand-large">
          <img src="/favicon.svg" alt="" width="28" height="28" /> pitcrew
        </div>
        <h1>{title}</h1>
        {children}
      </form>
    </main>
  );
}
