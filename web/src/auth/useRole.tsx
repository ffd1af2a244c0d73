import type { ReactNode } from 'react';
import { useMe } from './me';
import { roleAtLeast, type Role } from './roles';

// What each kind of button needs: the roles the service declares on its routes (issue 37). The
// service refuses anyway (403); the UI only never offers what would be refused.
const NEEDS = {
  /** Create, edit, delete: rules, runbooks, repositories, channels, credentials, keys, settings. */
  configure: 'admin',
  /** Run now, cancel, switch a rule on or off, the test buttons. */
  operate: 'operator',
  manageMembers: 'admin',
  readAudit: 'admin',
  manageSso: 'owner',
} as const satisfies Record<string, Role>;

export type Action = keyof typeof NEEDS;

/** The role an action needs. */
export function roleFor(action: Action): Role {
  return NEEDS[action];
}

/** The signed-in role in the current tenant and what it may do; nothing until /me has answered. */
export function useRole(): { role: Role | null; can: (action: Action) => boolean } {
  const role = useMe().data?.role ?? null;
  return { role, can: (action) => role !== null && roleAtLeast(role, NEEDS[action]) };
}

/** Shows its children only to a role that may do `action`. */
export function Can({ do: action, children, otherwise = null }: { do: Action; children: ReactNode; otherwise?: ReactNode }) {
  return useRole().can(action) ? children : otherwise;
}

/** A form a role that may not do `action` reads but cannot change: every control in it is disabled. */
export function EditableBy({ do: action, children }: { do: Action; children: ReactNode }) {
  return (
    <fieldset className="fieldset-plain" disabled={!useRole().can(action)}>
      {children}
    </fieldset>
  );
}
