import { useQuery } from '@tanstack/react-query';
import { api } from '../api/client';

interface Provider {
  id: string;
  name: string;
  type: string;
  startUrl: string;
}

/** A button per single sign-on provider of the tenant; nothing without a tenant, or when the service has none to offer. */
export function SsoButtons({ tenant }: { tenant: string | null }) {
  const providers = useQuery({
    queryKey: ['sso-buttons', tenant],
    // The service answers { items, passwordSignIn }; a bare list is read too.
    queryFn: async ({ signal }) => {
      const answer = await api<Provider[] | { items: Provider[] }>('/auth/providers', { query: { tenant }, signal });
      return Array.isArray(answer) ? answer : answer.items;
    },
    enabled: tenant !== null,
    retry: false,
  });
  const list = providers.data ?? [];
  if (list.length === 0) return null;
  return (
    <div className="sso-buttons">
      {list.map((provider) => (
        <a key={provider.id} className="button button-block" href={provider.startUrl}>
          Continue with {provider.name}
        </a>
      ))}
      <p className="sign-in-or">or</p>
    </div>
  );
}
