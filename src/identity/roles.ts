/**
 * What a member of a tenant may do, each role all of the one below it and more:
 * viewer reads; operator also runs, cancels, toggles rules and troubleshoots; admin also changes
 * what the tenant holds (rules, keys, channels, integrations, credentials, repositories, runbooks,
 * settings, members up to admin); owner also manages owners and sign-in (single sign-on).
 */
export const ROLES = ['viewer', 'operator', 'admin', 'owner'] as const;
export type Role = (typeof ROLES)[number];

export function isRole(value: unknown): value is Role {
  return typeof value === 'string' && (ROLES as readonly string[]).includes(value);
}

export function roleAtLeast(have: Role, need: Role): boolean {
  return ROLES.indexOf(have) >= ROLES.indexOf(need);
}

export function lesserRole(a: Role, b: Role): Role {
  return roleAtLeast(a, b) ? b : a;
}
