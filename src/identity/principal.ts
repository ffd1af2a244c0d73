import type { Role } from './roles.js';

/** How the caller proved who they are: a personal access token, or how their session signed in. */
export type SignInVia = 'token' | 'password' | 'oidc' | 'saml' | 'link';

/** Who a management call acts as, in which tenant, with which role (identity/authenticate.ts). */
export interface Principal {
  tenantId: string;
  /** The lesser of the member's role and, for a token, the token's. */
  role: Role;
  userId: string;
  email: string | null;
  via: SignInVia;
  /** The personal access token of the call; null for a session. */
  tokenId: string | null;
  tokenName: string | null;
  /** The session of the call; null for a token. */
  sessionId: string | null;
}
