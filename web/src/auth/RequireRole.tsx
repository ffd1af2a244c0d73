import type { ReactNode } from 'react';
import { Link } from 'react-router';
import { PageHeader } from '../ui/PageHeader';
import { EmptyState, ErrorBanner, Loading } from '../ui/states';
import { useMe } from './me';
import { roleFor, useRole, type Action } from './useRole';

interface RequireRoleProps {
  /** What the page is for: only a role that may do it sees the page. */
  to: Action;
  /** The page's purpose in words, for the refusal: "Creating a rule". */
  doing: string;
  /** Where to go instead, and its name. */
  back: { to: string; label: string };
  children: ReactNode;
}

/**
 * A page opened by its URL (a bookmark, a link pasted in chat) by someone whose role may not use
 * it: they are told which role it needs, rather than shown a form the service refuses on submit.
 */
export function RequireRole({ to: action, doing, back, children }: RequireRoleProps) {
  const me = useMe();
  const { role, can } = useRole();
  if (role === null) return me.isError ? <ErrorBanner error={me.error} what="your role" onRetry={() => void me.refetch()} /> : <Loading what="your role" />;
  if (can(action)) return <>{children}</>;
  const need = roleFor(action);
  const tenant = me.data?.tenants.find((one) => one.id === me.data?.tenantId)?.name;
  return (
    <>
      <PageHeader title={`You need the ${need} role`} />
      <EmptyState title={`${doing} needs the ${need} role${tenant ? ` in tenant ${tenant}` : ''}; you are ${role}.`}>
        <p>Ask an owner or admin of the tenant for the role. Until then you can read what is there.</p>
        <p>
          <Link to={back.to}>{back.label}</Link>
        </p>
      </EmptyState>
    </>
  );
}
