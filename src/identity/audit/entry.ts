import { Type, type Static } from 'typebox';
import type { AuditLogRow } from '../../store/schema.js';

/**
 * Who made a change: a person signed in to the UI (`user`), a person's personal access token
 * (`token`, with the person), a tenant API key (an agent enrolled with `--replace` takes over a
 * host), or someone not known (`anonymous`: a single sign-on refused before anyone was
 * recognised, with the e-mail the attempt claimed, unverified). A union on `type`, as
 * identity/requested-by.ts, so older entries still read when a kind is added.
 */
export const AuditActor = Type.Union([
  Type.Object({ type: Type.Literal('user'), id: Type.String({ description: "the user's id" }), email: Type.Union([Type.String(), Type.Null()]) }),
  Type.Object({
    type: Type.Literal('token'), id: Type.String({ description: "the personal access token's id" }), name: Type.String({ description: "the token's name when it acted" }),
    userId: Type.String({ description: 'the person the token belongs to' }), email: Type.Union([Type.String(), Type.Null()]),
  }),
  Type.Object({ type: Type.Literal('api_key'), id: Type.String(), name: Type.String({ description: "the key's name when it acted" }) }),
  Type.Object({ type: Type.Literal('anonymous'), email: Type.Union([Type.String(), Type.Null()], { description: 'the e-mail the refused attempt claimed, if any: not verified' }) }),
], { description: 'who made the change' });
export type AuditActor = Static<typeof AuditActor>;

export const AuditEntryView = Type.Object({
  id: Type.String(),
  at: Type.String({ format: 'date-time' }),
  actor: AuditActor,
  via: Type.String({ description: 'how the actor proved who they are: token (a personal access token), password, oidc, saml or link (a session), api_key' }),
  ip: Type.Union([Type.String(), Type.Null()], { description: "the caller's address (PITCREW_TRUST_PROXY decides whether X-Forwarded-For counts)" }),
  action: Type.String({ description: '<targetType>.<verb>, e.g. rule.update, execution.cancel' }),
  targetType: Type.String(),
  targetId: Type.Union([Type.String(), Type.Null()]),
  before: Type.Optional(Type.Unknown({ description: "the resource's view before the change, secrets masked" })),
  after: Type.Optional(Type.Unknown({ description: "the reply to the change (the resource's view after it), secrets masked" })),
});
export type AuditEntryView = Static<typeof AuditEntryView>;

/** What a recorder hands to the log: everything but the id, which the time makes. */
export interface AuditRecord {
  tenantId: string;
  at: number;
  actor: AuditActor;
  via: string;
  ip: string | null;
  action: string;
  targetType: string;
  targetId: string | null;
  before: unknown;
  after: unknown;
}

export function presentAuditEntry(row: AuditLogRow): AuditEntryView {
  return {
    id: row.id,
    at: new Date(row.at).toISOString(),
    actor: JSON.parse(row.actor) as AuditActor,
    via: row.via,
    ip: row.ip,
    action: row.action,
    targetType: row.target_type,
    targetId: row.target_id,
    ...(row.before === null ? {} : { before: JSON.parse(row.before) as unknown }),
    ...(row.after === null ? {} : { after: JSON.parse(row.after) as unknown }),
  };
}
