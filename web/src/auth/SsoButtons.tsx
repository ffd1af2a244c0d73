import { useQuery } from '@tanstack/react-query';
import { api } from '../api/client';
import { cookieSessionExpected } from './session';

interface Provider {
  id: string;
  name: string;
  type: string;
  startUrl: string;
}

interface SignInOptions {
  items: Provider[];
  /** False when the tenant requires single sign-on. */
  passwordSignIn: boolean;
}

/** How the tenant's members sign in; nothing to offer without a tenant, or when the service has no single sign-on (404). */
export function useSignInOptions(tenant: string | null) {
  return useQuery({
    queryKey: ['sign-in-options', tenant],
    // The service answers { items, passwordSignIn }; a bare list is read too.
    queryFn: async ({ signal }): Promise<SignInOptions> => {
      const answer = await api<Provider[] | SignInOptions>('/auth/providers', { query: { tenant }, signal });
      return Array.isArray(answer) ? { items: answer, passwordSignIn: true } : answer;
    },
    enabled: tenant !== null,
    retry: false,
  });
}

/** A button per single sign-on provider of the tenant. */
export function SsoButtons({ providers, passwordSignIn }: { providers: Provider[]; passwordSignIn: boolean }) {
  if (providers.length === 0) return null;
  return (
    <div className="sso-buttons">
      {providers.map((provider) => (
        <a key={provider.id} className="button button-block" href={provider.startUrl} onClick={cookieSessionExpected}>
          Continue with {provider.name}
        </a>
      ))}
      {passwordSignIn ? <p className="sign-in-or">or</p> : <p className="field-hint">This tenant signs in with single sign-on only.</p>}
    </div>
  );
}
