import { useMutation, useQueryClient } from '@tanstack/react-query';
import { Link } from 'react-router';
import { api } from '../api/client';
import { messageOf } from '../api/problem';
import { useTenant } from '../tenant/queries';
import { useMe, type Me } from './me';
import { currentToken, signOut } from './session';
import { keepCookieSession } from './signed-in';

/** Who is signed in, as what, where: and the ways out. */
export function UserMenu() {
  const me = useMe();
  const tenant = useTenant();
  const queryClient = useQueryClient();
  const signOutHere = useSignOut();
  const current = me.data?.tenants.find((one) => one.id === me.data?.tenantId);
  const viaToken = currentToken() !== null;
  return (
    <div className="user-menu" aria-label="signed in as">
      <div className="user-menu-who">
        <span className="strong" title={me.data?.user.email ?? undefined}>
          {me.data ? (me.data.user.email ?? 'the first owner') : '…'}
        </span>
        {me.data ? <span className="badge">{me.data.role}</span> : null}
      </div>
      {me.data && me.data.tenants.length > 1 && !viaToken ? (
        <TenantSwitcher me={me.data} onSwitched={(next) => keepCookieSession(queryClient, next)} />
      ) : (
        <div className="tenant" title="tenant">
          {current?.name ?? tenant.data?.name ?? '…'}
        </div>
      )}
      <Link to="/tokens" className="link-button">
        Tokens
      </Link>
      <Link to="/second-factor" className="link-button">
        Second factor{me.data ? (me.data.user.totp ? ' (on)' : ' (off)') : ''}
      </Link>
      <button type="button" className="link-button" onClick={() => signOutHere.mutate(false)} disabled={signOutHere.isPending}>
        Sign out
      </button>
      {viaToken ? null : (
        <button type="button" className="link-button" onClick={() => signOutHere.mutate(true)} disabled={signOutHere.isPending}>
          Sign out everywhere
        </button>
      )}
      {signOutHere.error ? <p className="field-error">{messageOf(signOutHere.error)}</p> : null}
    </div>
  );
}

/** Ends this session (or every session of the person); a token is only forgotten by this tab. */
function useSignOut() {
  const queryClient = useQueryClient();
  return useMutation({
    mutationFn: async (everywhere: boolean) => {
      if (currentToken() === null) await api('/auth/logout', { method: 'POST', body: everywhere ? { everywhere: true } : {} });
    },
    onSuccess: () => {
      queryClient.clear();
      signOut();
    },
  });
}

function TenantSwitcher({ me, onSwitched }: { me: Me; onSwitched: (me: Me) => void }) {
  const switchTo = useMutation({
    mutationFn: (tenantId: string) => api<Me>('/auth/tenant', { method: 'POST', body: { tenantId } }),
    onSuccess: onSwitched,
  });
  return (
    <div className="tenant-switcher">
      <select aria-label="Tenant" value={me.tenantId} disabled={switchTo.isPending} onChange={(event) => switchTo.mutate(event.target.value)}>
        {me.tenants.map((one) => (
          <option key={one.id} value={one.id}>
            {one.name} ({one.role})
          </option>
        ))}
      </select>
      {switchTo.error ? <span className="field-error">{messageOf(switchTo.error)}</span> : null}
    </div>
  );
}
